# The same program as explain/space_3d.orn, as JSON.
configure_file("${CASE_DIR}/../explain/space_3d.orn" "${OUT}" COPYONLY)
