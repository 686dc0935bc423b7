# The same program as explain/replicated.orn, as JSON.
configure_file("${CASE_DIR}/../explain/replicated.orn" "${OUT}" COPYONLY)
