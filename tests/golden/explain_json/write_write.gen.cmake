# The same program as explain/write_write.orn, as JSON.
configure_file("${CASE_DIR}/../explain/write_write.orn" "${OUT}" COPYONLY)
