# The same program as explain/prefix_sum.orn, as JSON.
configure_file("${CASE_DIR}/../explain/prefix_sum.orn" "${OUT}" COPYONLY)
