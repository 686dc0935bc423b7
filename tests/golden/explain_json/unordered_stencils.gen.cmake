# The same program as explain/unordered_stencils.orn, as JSON.
configure_file("${CASE_DIR}/../explain/unordered_stencils.orn" "${OUT}" COPYONLY)
