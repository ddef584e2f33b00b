; Tag query for Zig (tree-sitter-zig). Capture conventions: see src/core/parse/parser.ts.
;
; Zig has no type declarations of its own: a type is a constant whose value is a container,
; `const Stack = struct { ... };`, so the `variable_declaration` is the definition and the
; functions inside the container become its methods (see parser.ts).

; ---- Definitions ----------------------------------------------------------------------

(variable_declaration
  (identifier) @name
  [(struct_declaration) (union_declaration) (opaque_declaration)]) @definition.struct

(variable_declaration
  (identifier) @name
  [(enum_declaration) (error_set_declaration)]) @definition.enum

; Generic types are functions returning a container: fn List(comptime T: type) type {
; return struct { ... }; }. The function is the type, and the container's functions its methods.
((function_declaration
  name: (identifier) @name
  type: (builtin_type) @_type
  body: (block
    (expression_statement
      (return_expression
        [(struct_declaration) (union_declaration) (opaque_declaration)])))) @definition.struct
  (#eq? @_type "type"))

((function_declaration
  name: (identifier) @name
  type: (builtin_type) @_type
  body: (block
    (expression_statement
      (return_expression
        (enum_declaration))))) @definition.enum
  (#eq? @_type "type"))

(function_declaration
  name: (identifier) @name) @definition.function

; test "name" { ... }; `test helper { ... }` documents helper and is a reference to it instead.
(test_declaration
  (string . (string_content) @name)) @definition.function

; Fields of structs and unions (they have a type; enum members do not).
(container_field
  name: (identifier) @name
  type: (_)) @definition.field

; Declarations at file and container level, not locals. Type aliases, without a declared type
; (which would match the alternatives below): const Index = u32; const Map =
; std.AutoHashMap(K, V) (a type by Zig's naming convention: a capitalised name).
[
  (source_file
    (variable_declaration
      "const"
      !type
      (identifier) @name
      [(builtin_type) (pointer_type) (nullable_type) (slice_type) (array_type) (error_union_type) (function_signature)]) @definition.type)
  (struct_declaration
    (variable_declaration
      "const"
      !type
      (identifier) @name
      [(builtin_type) (pointer_type) (nullable_type) (slice_type) (array_type) (error_union_type) (function_signature)]) @definition.type)
  (union_declaration
    (variable_declaration
      "const"
      !type
      (identifier) @name
      [(builtin_type) (pointer_type) (nullable_type) (slice_type) (array_type) (error_union_type) (function_signature)]) @definition.type)
  (enum_declaration
    (variable_declaration
      "const"
      !type
      (identifier) @name
      [(builtin_type) (pointer_type) (nullable_type) (slice_type) (array_type) (error_union_type) (function_signature)]) @definition.type)
  (opaque_declaration
    (variable_declaration
      "const"
      !type
      (identifier) @name
      [(builtin_type) (pointer_type) (nullable_type) (slice_type) (array_type) (error_union_type) (function_signature)]) @definition.type)
]

([
  (source_file (variable_declaration "const" !type (identifier) @name (call_expression)) @definition.type)
  (struct_declaration (variable_declaration "const" !type (identifier) @name (call_expression)) @definition.type)
  (union_declaration (variable_declaration "const" !type (identifier) @name (call_expression)) @definition.type)
  (enum_declaration (variable_declaration "const" !type (identifier) @name (call_expression)) @definition.type)
  (opaque_declaration (variable_declaration "const" !type (identifier) @name (call_expression)) @definition.type)
]
  (#match? @name "^[A-Z]"))

; Constants with a value computed in place; aliases (const mem = std.mem;), imports and
; @This() are not definitions.
[
  (source_file
    (variable_declaration
      "const"
      (identifier) @name
      [(integer) (float) (string) (multiline_string) (boolean) (character) (binary_expression) (unary_expression)
       (struct_initializer) (anonymous_struct_initializer) (call_expression)]) @definition.constant)
  (struct_declaration
    (variable_declaration
      "const"
      (identifier) @name
      [(integer) (float) (string) (multiline_string) (boolean) (character) (binary_expression) (unary_expression)
       (struct_initializer) (anonymous_struct_initializer) (call_expression)]) @definition.constant)
  (union_declaration
    (variable_declaration
      "const"
      (identifier) @name
      [(integer) (float) (string) (multiline_string) (boolean) (character) (binary_expression) (unary_expression)
       (struct_initializer) (anonymous_struct_initializer) (call_expression)]) @definition.constant)
  (enum_declaration
    (variable_declaration
      "const"
      (identifier) @name
      [(integer) (float) (string) (multiline_string) (boolean) (character) (binary_expression) (unary_expression)
       (struct_initializer) (anonymous_struct_initializer) (call_expression)]) @definition.constant)
  (opaque_declaration
    (variable_declaration
      "const"
      (identifier) @name
      [(integer) (float) (string) (multiline_string) (boolean) (character) (binary_expression) (unary_expression)
       (struct_initializer) (anonymous_struct_initializer) (call_expression)]) @definition.constant)
]

[
  (source_file (variable_declaration "var" (identifier) @name) @definition.variable)
  (struct_declaration (variable_declaration "var" (identifier) @name) @definition.variable)
  (union_declaration (variable_declaration "var" (identifier) @name) @definition.variable)
  (enum_declaration (variable_declaration "var" (identifier) @name) @definition.variable)
  (opaque_declaration (variable_declaration "var" (identifier) @name) @definition.variable)
]

; ---- References -----------------------------------------------------------------------

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression
    member: (identifier) @name)) @reference.call

; Types: parameters, return types, declared types, fields, and the types inside pointer,
; optional, slice, array and error union types; std.mem.Allocator -> Allocator.
((_
  type: [
    (identifier) @name
    (field_expression member: (identifier) @name)
  ]) @reference.type
  (#not-eq? @name "_"))

([
  (pointer_type [(identifier) @name (field_expression member: (identifier) @name)])
  (nullable_type [(identifier) @name (field_expression member: (identifier) @name)])
  (slice_type [(identifier) @name (field_expression member: (identifier) @name)])
  (array_type [(identifier) @name (field_expression member: (identifier) @name)])
] @reference.type
  (#not-eq? @name "_"))

(error_union_type
  [
    error: (identifier) @name
    ok: (identifier) @name
    ok: (field_expression member: (identifier) @name)
  ]) @reference.type

; Stack{ ... }, std.ArrayList(u8){ ... }
(struct_initializer
  [
    (identifier) @name
    (field_expression member: (identifier) @name)
  ]) @reference.type

(test_declaration
  (identifier) @name) @reference

; Fields and declarations reached through a value or a namespace: self.len, std.mem.
(field_expression
  member: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

((builtin_function
  (builtin_identifier) @_builtin) @import
  (#eq? @_builtin "@import"))
