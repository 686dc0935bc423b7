# 256 levels of brackets are allowed.
string(REPEAT "(" 256 open)
string(REPEAT ")" 256 close)
file(WRITE "${OUT}" "x = ${open}1${close}\n")
