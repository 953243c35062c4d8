#pragma once
// A choice the tensor-core GEMM makes by rule (rung 2's splits, stages, Turing kernel; rung 6's
// kernel family and stream-K), held at a forced value for a scope: GPU tests and the experiments
// that show a rule beside its alternatives.

namespace memlab::detail::gemm_tc {

/// Holds an override (`Set`) at a value for the scope's lifetime, then `Rule` (the choice by rule)
/// again. The overrides are process-wide, not for concurrent use.
template <class T, void (*Set)(T), T Rule>
class forced_scope {
 public:
  explicit forced_scope(T value) { Set(value); }
  ~forced_scope() { Set(Rule); }
  forced_scope(forced_scope const&) = delete;
  forced_scope& operator=(forced_scope const&) = delete;
};

}  // namespace memlab::detail::gemm_tc
