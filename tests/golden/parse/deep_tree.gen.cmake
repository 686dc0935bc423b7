# 3000 unary 'not': parses, but the tree is deeper than later passes are given.
string(REPEAT "not " 3000 nots)
file(WRITE "${OUT}" "x = ${nots}true\n")
