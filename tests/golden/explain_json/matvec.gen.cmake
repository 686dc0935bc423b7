# The same program as explain/matvec.orn, as JSON.
configure_file("${CASE_DIR}/../explain/matvec.orn" "${OUT}" COPYONLY)
