# The same program as explain/callees.orn, as JSON.
configure_file("${CASE_DIR}/../explain/callees.orn" "${OUT}" COPYONLY)
