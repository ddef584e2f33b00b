; Tag query for Haskell (tree-sitter-haskell). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; The module's name alone: the header does not enclose the declarations, and its export
; list would fill the signature.
(header
  module: (module) @name @definition.module)

; A data type with one record constructor is a struct; other data types are types.
(data_type
  name: (name) @name
  constructors: (data_constructors
    .
    (data_constructor
      constructor: (record))
    .)) @definition.struct

(data_type
  name: (name) @name) @definition.type

(newtype
  name: (name) @name) @definition.type

(type_synomym
  name: (name) @name) @definition.type

(type_family
  name: (name) @name) @definition.type

(data_family
  name: (name) @name) @definition.type

; Record fields are accessor functions: data Config = Config { cfgName :: String }.
(field
  name: (field_name
    (variable) @name)) @definition.field

; A class is an interface; its method signatures become its methods.
(class
  name: (name) @name) @definition.interface

(class_declarations
  (signature
    name: [
      (variable) @name
      (prefix_id (operator) @name)
    ]) @definition.function)

(class_declarations
  (signature
    names: (binding_list
      [
        (variable) @name
        (prefix_id (operator) @name)
      ])) @definition.function)

; Instances qualify their methods by the instance's type (instance Show Shape: Shape.show),
; or by the class when the type has no name of its own (instance Show [a]: Show.show).
(instance
  patterns: (type_patterns
    .
    [
      (name) @name
      (qualified id: (name) @name)
      (parens type: [
        (apply constructor: [(name) @name (qualified id: (name) @name)])
        (apply constructor: (apply constructor: [(name) @name (qualified id: (name) @name)]))
        (apply constructor: (apply constructor: (apply constructor: [(name) @name (qualified id: (name) @name)])))
        (apply constructor: (apply constructor: (apply constructor: (apply constructor: [(name) @name (qualified id: (name) @name)]))))
        (apply constructor: (apply constructor: (apply constructor: (apply constructor: (apply constructor: [(name) @name (qualified id: (name) @name)])))))
      ])
    ])) @scope

(instance
  name: [(name) @name (qualified id: (name) @name)]
  patterns: (type_patterns
    .
    [
      (list)
      (tuple)
      (unit)
      (variable)
      (function)
      (prefix_tuple)
      (prefix_list)
      (parens type: [
        (function)
        (apply constructor: [(variable) (prefix_tuple) (prefix_list) (unit)])
        (apply constructor: (apply constructor: [(variable) (prefix_tuple) (prefix_list) (unit)]))
        (apply constructor: (apply constructor: (apply constructor: [(variable) (prefix_tuple) (prefix_list) (unit)])))
      ])
    ])) @scope

; Functions. The grammar has one node per equation and the type signature apart from them,
; so one symbol per name: the signature when there is one (it carries the type), else the
; first equation of the group. An equation starts a group when the declaration before it
; (comments, haddock, pragmas such as INLINE and CPP lines skipped) is not a signature or
; an equation of the same name. Equations inside classes are default methods, whose
; signatures are already the class's methods.
(declarations
  (signature
    name: [
      (variable) @name
      (prefix_id (operator) @name)
    ]) @definition.function)

(instance_declarations
  (signature
    name: (variable) @name) @definition.function)

(foreign_import
  signature: (signature
    name: (variable) @name)) @definition.function

(pattern_synonym
  (signature
    synonym: (constructor) @name)) @definition.function

; The first declaration of its block.
(declarations
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(instance_declarations
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

; After a declaration named otherwise (a signature or equation of another name, a data type).
((declarations
  (_ name: (_) @_prev)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)
  (#not-eq? @_prev @name))

((instance_declarations
  (_ name: (_) @_prev)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)
  (#not-eq? @_prev @name))

; After a declaration without a name: a fixity, a foreign import, a signature of several
; names, an operator defined infix (a <+> b = ...), and so on. One pattern each: written as
; an alternation, this position loses matches (tree-sitter's query engine).
(declarations
  (fixity)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (foreign_import)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (foreign_export)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (pattern_synonym)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (data_instance)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (default_types)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (role_annotation)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (top_splice)
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (signature names: (_))
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (function (infix))
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(declarations
  (bind pattern: (_))
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(instance_declarations
  (function (infix))
  .
  [(comment) (haddock) (pragma) (cpp)]*
  .
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

; ---- References -----------------------------------------------------------------------

; Applications: f x y is (apply (apply f x) y), so the function sits in the innermost apply.
(apply
  function: [
    (variable) @name
    (qualified id: (variable) @name)
  ]) @reference.call

; f $ x
((infix
  left_operand: [
    (variable) @name
    (qualified id: (variable) @name)
  ]
  operator: (operator) @_op) @reference.call
  (#eq? @_op "$"))

; x `elem` xs
(infix
  operator: (infix_id [
    (variable) @name
    (qualified id: (variable) @name)
  ])) @reference.call

; Superclasses, instance heads and derived classes: inheritance edges of the type.
(class
  context: (context
    context: [
      (apply constructor: (name) @name)
      (parens (apply constructor: (name) @name))
      (tuple (apply constructor: (name) @name))
    ])) @reference.inherit

(instance
  name: [(name) @name (qualified id: (name) @name)]) @reference.inherit

(deriving_instance
  name: [(name) @name (qualified id: (name) @name)]) @reference.inherit

(deriving
  classes: [
    (name) @name
    (qualified id: (name) @name)
    (parens [(name) @name (qualified id: (name) @name)])
    (tuple [(name) @name (qualified id: (name) @name)])
  ]) @reference.inherit

; Type constructors (in signatures, fields, constraints, export and import lists).
(name) @name @reference.type

; Functions passed as values: arguments of a named function (data constructor patterns such
; as (Queue f b) have the same shape, so only applications headed by a variable count),
; operands of an operator, and a right-hand side that is a bare name.
(apply
  function: [(variable) (qualified)]
  argument: (variable) @name) @reference

(apply
  function: (apply
    function: [(variable) (qualified)])
  argument: (variable) @name) @reference

(apply
  function: (apply
    function: (apply
      function: [(variable) (qualified)]))
  argument: (variable) @name) @reference

(infix
  left_operand: (variable) @name
  operator: [(operator) (infix_id)]) @reference

(infix
  operator: [(operator) (infix_id)]
  right_operand: (variable) @name) @reference

(match
  expression: (variable) @name) @reference

; Actions run by a do block: do { line <- anyLine; skipSpaces }.
(exp
  [
    (variable) @name
    (qualified id: (variable) @name)
  ]) @reference.call

(do
  (bind
    expression: [
      (variable) @name
      (qualified id: (variable) @name)
    ])) @reference.call

(export
  variable: [
    (variable) @name
    (qualified id: (variable) @name)
  ]) @reference

; M.lookup and other qualified names that are not applied.
(qualified
  id: (variable) @name) @reference

; Data constructors, in expressions and patterns (not where they are declared): uses of
; the type they build, which mostly shares their name.
(apply
  [
    function: (constructor) @name
    argument: (constructor) @name
  ]) @reference.type

(match
  expression: (constructor) @name) @reference.type

(patterns
  (constructor) @name) @reference.type

(alternative
  pattern: (constructor) @name) @reference.type

(parens
  [
    expression: (constructor) @name
    pattern: (constructor) @name
  ]) @reference.type

(tuple
  element: (constructor) @name) @reference.type

(list
  element: (constructor) @name) @reference.type

(infix
  [
    left_operand: (constructor) @name
    right_operand: (constructor) @name
  ]) @reference.type

(record
  expression: (constructor) @name) @reference.type

(qualified
  id: (constructor) @name) @reference.type

; ---- Imports --------------------------------------------------------------------------

(import) @import
