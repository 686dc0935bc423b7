# 100000 '(' on one line: the lexer stops at 257 levels with one error.
string(REPEAT "(" 100000 open)
file(WRITE "${OUT}" "x = ${open}1\n")
