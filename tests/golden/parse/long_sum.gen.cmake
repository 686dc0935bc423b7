# 100000 terms of a left-associative sum: a shallow parser stack but a deep tree.
string(REPEAT "1 + " 100000 terms)
file(WRITE "${OUT}" "x = ${terms}1\n")
