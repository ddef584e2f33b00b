; Tag query for Lua (tree-sitter-grammars/tree-sitter-lua). Capture conventions: see
; src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; function f() / local function f()
(function_declaration
  name: (identifier) @name) @definition.function

; function M.f() / function a.b.c(): qualified by the table they are stored in (M.f, a.b.c).
(function_declaration
  name: (dot_index_expression
    table: (_) @receiver
    field: (identifier) @name)) @definition.function

; function M:m(): a method with an implicit self.
(function_declaration
  name: (method_index_expression
    table: (_) @receiver
    method: (identifier) @name)) @definition.method

; f = function() ... end / local f = function() ... end (a single value: the first name).
(assignment_statement
  (variable_list
    .
    name: (identifier) @name)
  (expression_list
    .
    value: (function_definition) @definition.function
    .))

; self.f = function() ... end inside a method: named by the enclosing function alone.
((assignment_statement
  (variable_list
    .
    name: (dot_index_expression
      table: (identifier) @_self
      field: (identifier) @name))
  (expression_list
    .
    value: (function_definition) @definition.function
    .))
  (#eq? @_self "self"))

; M.f = function() ... end / M.sub.f = function() ... end
(assignment_statement
  (variable_list
    .
    name: (dot_index_expression
      table: (_) @receiver
      field: (identifier) @name))
  (expression_list
    .
    value: (function_definition) @definition.function
    .))

; Tables assigned at file level are Lua's modules and classes: local M = {} / M = { ... }.
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list
        .
        name: (identifier) @name)
      (expression_list
        .
        value: (table_constructor)
        .))) @definition.module)

(chunk
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: (table_constructor)
      .)) @definition.module)

; Functions in a file-level table constructor: local M = { f = function() end } and a
; module's `return { f = function() end }`.
(chunk
  (variable_declaration
    (assignment_statement
      (expression_list
        value: (table_constructor
          (field
            name: (identifier) @name
            value: (function_definition) @definition.function))))))

(chunk
  (assignment_statement
    (expression_list
      value: (table_constructor
        (field
          name: (identifier) @name
          value: (function_definition) @definition.function)))))

(chunk
  (return_statement
    (expression_list
      (table_constructor
        (field
          name: (identifier) @name
          value: (function_definition) @definition.function)))))

; Upper-case file-level names bound to a literal: local MAX_SIZE = 64.
((chunk
  (variable_declaration
    (assignment_statement
      (variable_list
        .
        name: (identifier) @name)
      (expression_list
        .
        value: [(number) (string) (true) (false)]
        .))) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

((chunk
  (assignment_statement
    (variable_list
      .
      name: (identifier) @name)
    (expression_list
      .
      value: [(number) (string) (true) (false)]
      .)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

; ---- References -----------------------------------------------------------------------

(function_call
  name: (identifier) @name) @reference.call

(function_call
  name: (dot_index_expression
    field: (identifier) @name)) @reference.call

; obj:m()
(function_call
  name: (method_index_expression
    method: (identifier) @name)) @reference.call

; t.field uses that are not calls.
(dot_index_expression
  field: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

; local json = require("json") / json = require "json": the whole statement.
((variable_declaration
  (assignment_statement
    (expression_list
      value: (function_call
        name: (identifier) @_require)))) @import
  (#eq? @_require "require"))

((chunk
  (assignment_statement
    (expression_list
      value: (function_call
        name: (identifier) @_require))) @import)
  (#eq? @_require "require"))

((block
  (assignment_statement
    (expression_list
      value: (function_call
        name: (identifier) @_require))) @import)
  (#eq? @_require "require"))

; A bare require("strict") statement.
((chunk
  (function_call
    name: (identifier) @_require) @import)
  (#eq? @_require "require"))

((block
  (function_call
    name: (identifier) @_require) @import)
  (#eq? @_require "require"))
