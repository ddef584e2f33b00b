; Route extraction (src/core/context/routes.ts): `r.GET("/path", handler)` calls (Gin, Echo,
; Fiber, net/http's HandleFunc).
(call_expression
  function: (selector_expression field: (field_identifier) @method)
  arguments: (argument_list . (interpreted_string_literal) @path)) @call
