# The shipped example, unchanged: its plans are part of the contract.
configure_file("${CASE_DIR}/../../../examples/slr.orn" "${OUT}" COPYONLY)
