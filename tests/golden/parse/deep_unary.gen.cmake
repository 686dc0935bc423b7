# 20000 unary minus: the parser's bounded stack fills up; one "nesting too deep" error.
string(REPEAT "- " 20000 neg)
file(WRITE "${OUT}" "x = ${neg}1\n")
