# The same program as explain/gauss_seidel_9.orn, as JSON.
configure_file("${CASE_DIR}/../explain/gauss_seidel_9.orn" "${OUT}" COPYONLY)
