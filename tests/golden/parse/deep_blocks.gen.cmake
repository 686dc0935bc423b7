# 300 nested 'if' blocks: more than 256 is "nesting too deep".
set(text "x = true\n")
foreach(i RANGE 1 300)
  string(APPEND text "if x\n")
endforeach()
foreach(i RANGE 1 300)
  string(APPEND text "end\n")
endforeach()
file(WRITE "${OUT}" "${text}")
