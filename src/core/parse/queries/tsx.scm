; Tag query for TSX: the TypeScript query (typescript.scm, loaded first) plus the JSX patterns below.
; Capture conventions: see src/core/parse/parser.ts.
; ---- JSX --------------------------------------------------------------------------------

; <Component ...> uses count as calls; lower-case names are HTML tags.
((jsx_opening_element
  name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z]"))

((jsx_self_closing_element
  name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z]"))
