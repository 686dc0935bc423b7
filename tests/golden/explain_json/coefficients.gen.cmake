# The same program as explain/coefficients.orn, as JSON.
configure_file("${CASE_DIR}/../explain/coefficients.orn" "${OUT}" COPYONLY)
