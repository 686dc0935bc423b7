# Warning and sanitizer flags shared by every target of the project.
set(ORN_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wwrite-strings -Wvla)
if(ORN_WERROR)
  list(APPEND ORN_WARNINGS -Werror)
endif()

function(orn_target_warnings target)
  target_compile_options(${target} PRIVATE ${ORN_WARNINGS})
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
endfunction()

if(ORN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
