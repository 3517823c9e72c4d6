// RUN: xhlo-opt %s --xhlo-legalize-tuples-and-tokens --split-input-file | FileCheck %s

// get_tuple_element(tuple(...)) folds through nested tuples; the tuples go.

// CHECK-LABEL: func.func @fold_nested
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<i32>
// CHECK-NEXT: return %[[B]] : tensor<i32>
// CHECK-NOT: stablehlo.tuple
func.func @fold_nested(%a: tensor<2xf32>, %b: tensor<i32>) -> tensor<i32> {
  %t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i32>>
  %u = stablehlo.tuple %t, %a : tuple<tuple<tensor<2xf32>, tensor<i32>>, tensor<2xf32>>
  %x = stablehlo.get_tuple_element %u[0] : (tuple<tuple<tensor<2xf32>, tensor<i32>>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<i32>>
  %y = stablehlo.get_tuple_element %x[1] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  return %y : tensor<i32>
}

// -----

// Tuple arguments and results are flattened into their leaves, in order.

// CHECK-LABEL: func.func @flatten_signature
// CHECK-SAME: (%[[X:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[N:[a-zA-Z0-9_]+]]: tensor<i32>, %[[K:[a-zA-Z0-9_]+]]: tensor<i32>) -> (tensor<i32>, tensor<2xf32>)
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %[[N]], %[[K]] : tensor<i32>
// CHECK-NEXT: return %[[S]], %[[X]] : tensor<i32>, tensor<2xf32>
func.func @flatten_signature(%t: tuple<tensor<2xf32>, tuple<tensor<i32>>>, %k: tensor<i32>) -> tuple<tensor<i32>, tensor<2xf32>> {
  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>, tuple<tensor<i32>>>) -> tensor<2xf32>
  %inner = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tuple<tensor<i32>>>) -> tuple<tensor<i32>>
  %n = stablehlo.get_tuple_element %inner[0] : (tuple<tensor<i32>>) -> tensor<i32>
  %s = stablehlo.add %n, %k : tensor<i32>
  %r = stablehlo.tuple %s, %x : tuple<tensor<i32>, tensor<2xf32>>
  return %r : tuple<tensor<i32>, tensor<2xf32>>
}

// -----

// Token arguments and results are dropped, their positions recorded;
// after_all and create_token chains that only feed them disappear.

// CHECK-LABEL: func.func @token_signature
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<i32>) -> tensor<i32>
// CHECK-SAME: attributes {xhlo.token_arguments = array<i64: 0>, xhlo.token_results = array<i64: 1>}
// CHECK-NEXT: return %[[A]] : tensor<i32>
func.func @token_signature(%tok: !stablehlo.token, %a: tensor<i32>) -> (tensor<i32>, !stablehlo.token) {
  %t = stablehlo.after_all %tok : !stablehlo.token
  %c = stablehlo.create_token : !stablehlo.token
  %t2 = stablehlo.after_all %t, %c : !stablehlo.token
  return %a, %t2 : tensor<i32>, !stablehlo.token
}

// -----

// A token loop carry is dropped from the operands, regions and results.

// CHECK-LABEL: func.func @while_token_carry
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<i32>) -> tensor<i32>
// CHECK: %[[R:.*]] = stablehlo.while(%[[I:.*]] = %[[A]]) : tensor<i32>
// CHECK: stablehlo.compare LT, %[[I]]
// CHECK: %[[NEXT:.*]] = stablehlo.add %[[I]]
// CHECK-NEXT: stablehlo.return %[[NEXT]] : tensor<i32>
// CHECK: return %[[R]] : tensor<i32>
// CHECK-NOT: token
func.func @while_token_carry(%tok: !stablehlo.token, %a: tensor<i32>) -> tensor<i32> {
  %r:2 = stablehlo.while(%t = %tok, %i = %a) : !stablehlo.token, tensor<i32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %t2 = stablehlo.after_all %t : !stablehlo.token
    stablehlo.return %t2, %i2 : !stablehlo.token, tensor<i32>
  }
  return %r#1 : tensor<i32>
}

// -----

// Token results of case (and if) are dropped from every branch.

// CHECK-LABEL: func.func @case_token_result
// CHECK-SAME: (%[[I:[a-zA-Z0-9_]+]]: tensor<i32>, %[[X:[a-zA-Z0-9_]+]]: tensor<2xf32>)
// CHECK-NOT: token
// CHECK: %[[R:.*]] = "stablehlo.case"(%[[I]])
// CHECK-NEXT: stablehlo.return %[[X]] : tensor<2xf32>
// CHECK: %[[NEG:.*]] = stablehlo.negate %[[X]]
// CHECK-NEXT: stablehlo.return %[[NEG]] : tensor<2xf32>
// CHECK: (tensor<i32>) -> tensor<2xf32>
// CHECK: return %[[R]] : tensor<2xf32>
func.func @case_token_result(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %tok = stablehlo.create_token : !stablehlo.token
  %r:2 = "stablehlo.case"(%i) ({
    stablehlo.return %tok, %x : !stablehlo.token, tensor<2xf32>
  }, {
    %0 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %tok, %0 : !stablehlo.token, tensor<2xf32>
  }) : (tensor<i32>) -> (!stablehlo.token, tensor<2xf32>)
  return %r#1 : tensor<2xf32>
}

// -----

// A token feeding a side effect becomes a fresh operand-less after_all.

// CHECK-LABEL: func.func @token_kept_for_side_effect
// CHECK-SAME: (%[[X:[a-zA-Z0-9_]+]]: tensor<2xf32>)
// CHECK-SAME: attributes {xhlo.token_arguments = array<i64: 0>, xhlo.token_results = array<i64: 0>}
// CHECK-NEXT: %[[T:.*]] = stablehlo.after_all : !stablehlo.token
// CHECK-NEXT: "stablehlo.outfeed"(%[[X]], %[[T]])
// CHECK-NEXT: return{{$}}
func.func @token_kept_for_side_effect(%tok: !stablehlo.token, %x: tensor<2xf32>) -> !stablehlo.token {
  %t = stablehlo.after_all %tok : !stablehlo.token
  %o = "stablehlo.outfeed"(%x, %t) {outfeed_config = ""} : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  return %o : !stablehlo.token
}

// -----

// Static dimension sizes are i32 constants; dynamic ones stay.

// CHECK-LABEL: func.func @dimension_sizes
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<2x?xf32>)
// CHECK-NEXT: %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<i32>
// CHECK-NEXT: %[[DYN:.*]] = stablehlo.get_dimension_size %[[A]], dim = 1
// CHECK-NEXT: return %[[TWO]], %[[DYN]]
func.func @dimension_sizes(%a: tensor<2x?xf32>) -> (tensor<i32>, tensor<i32>) {
  %0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<2x?xf32>) -> tensor<i32>
  %1 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x?xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

// Calls follow the flattened signature of their callee.

// CHECK-LABEL: func.func private @swap
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<i32>) -> (tensor<i32>, tensor<2xf32>)
// CHECK-NEXT: return %[[B]], %[[A]] : tensor<i32>, tensor<2xf32>
// CHECK-LABEL: func.func @call_with_tuples
// CHECK-SAME: (%[[X:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<i32>)
// CHECK-NEXT: %[[S:.*]]:2 = call @swap(%[[X]], %[[Y]]) : (tensor<2xf32>, tensor<i32>) -> (tensor<i32>, tensor<2xf32>)
// CHECK-NEXT: return %[[S]]#0 : tensor<i32>
func.func private @swap(%t: tuple<tensor<2xf32>, tensor<i32>>) -> tuple<tensor<i32>, tensor<2xf32>> {
  %a = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<2xf32>
  %b = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  %r = stablehlo.tuple %b, %a : tuple<tensor<i32>, tensor<2xf32>>
  return %r : tuple<tensor<i32>, tensor<2xf32>>
}
func.func @call_with_tuples(%x: tensor<2xf32>, %y: tensor<i32>) -> tensor<i32> {
  %t = stablehlo.tuple %x, %y : tuple<tensor<2xf32>, tensor<i32>>
  %s = func.call @swap(%t) : (tuple<tensor<2xf32>, tensor<i32>>) -> tuple<tensor<i32>, tensor<2xf32>>
  %first = stablehlo.get_tuple_element %s[0] : (tuple<tensor<i32>, tensor<2xf32>>) -> tensor<i32>
  return %first : tensor<i32>
}
