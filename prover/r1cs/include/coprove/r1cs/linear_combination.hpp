// Variables and linear combinations of an R1CS constraint system, modelled on the Groth16 provers
// (bellman): a constraint is <A_i, w> * <B_i, w> = <C_i, w> over the assignment w. The assignment
// is one vector: the public inputs first (column 0 is the constant one), then the auxiliaries, so a
// variable is just its column and the recorded matrices need no remapping.
#pragma once

#include <coprove/field/fr.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace coprove::r1cs {
using field::fr;


/// A column of the assignment: 0 is the constant one, then the other inputs, then auxiliaries.
struct variable {
  std::uint32_t index = 0;
  friend bool operator==(variable, variable) = default;
};

/// One term of a linear combination: coefficient * variable.
struct lc_term {
  variable var;
  fr coefficient;
};

/// A sum of coefficient * variable terms. Terms are kept in the order they were added; the same
/// variable may appear more than once (their sum is what counts).
class linear_combination {
 public:
  linear_combination() = default;

  /// Adds coefficient * v (coefficient one when omitted).
  linear_combination& add(variable v) {
    terms_.push_back({v, fr::one()});
    return *this;
  }
  linear_combination& add(const fr& coefficient, variable v) {
    terms_.push_back({v, coefficient});
    return *this;
  }
  /// Subtracts coefficient * v.
  linear_combination& sub(variable v) {
    terms_.push_back({v, -fr::one()});
    return *this;
  }
  linear_combination& sub(const fr& coefficient, variable v) {
    terms_.push_back({v, -coefficient});
    return *this;
  }
  /// Appends every term of another combination.
  linear_combination& add(const linear_combination& other) {
    terms_.insert(terms_.end(), other.terms_.begin(), other.terms_.end());
    return *this;
  }

  /// <this, assignment>; coefficient-one terms are added without a multiplication.
  fr evaluate(std::span<const fr> assignment) const noexcept {
    constexpr fr one = fr::one();
    fr acc = fr::zero();
    for (const lc_term& t : terms_) {
      const fr& value = assignment[t.var.index];
      // Limb by limb: std::array's == goes through memcmp, which dominates this loop otherwise.
      const auto& l = t.coefficient.limbs;
      if (((l[0] ^ one.limbs[0]) | (l[1] ^ one.limbs[1]) | (l[2] ^ one.limbs[2]) |
           (l[3] ^ one.limbs[3])) == 0) {
        acc += value;
      } else {
        acc += value * t.coefficient;
      }
    }
    return acc;
  }

  std::span<const lc_term> terms() const noexcept { return terms_; }
  std::size_t size() const noexcept { return terms_.size(); }
  bool empty() const noexcept { return terms_.empty(); }
  /// Drops the terms but keeps the storage (scratch combinations are reused per constraint).
  void clear() noexcept { terms_.clear(); }

 private:
  std::vector<lc_term> terms_;
};

/// A non-owning reference to something that appends terms to a linear combination: a lambda
/// `[&](linear_combination& lc) { lc.add(x).add(k, one); }` or an existing combination. Systems
/// that only compute the witness never call it, so circuits pay for building combinations only
/// where they are used. Valid for the full expression it is created in (like std::function_ref).
class lc_builder {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, lc_builder> &&
             !std::is_same_v<std::remove_cvref_t<F>, linear_combination> &&
             std::is_invocable_v<F&, linear_combination&>)
  lc_builder(F&& f) noexcept  // NOLINT(google-explicit-constructor): used like a function_ref
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, linear_combination& lc) {
          (*static_cast<std::remove_reference_t<F>*>(object))(lc);
        }) {}

  /// Appends the terms of an existing combination.
  lc_builder(const linear_combination& lc) noexcept  // NOLINT(google-explicit-constructor)
      : object_(const_cast<void*>(static_cast<const void*>(&lc))),
        call_([](void* object, linear_combination& out) {
          out.add(*static_cast<const linear_combination*>(object));
        }) {}

  /// Appends this builder's terms to lc.
  void operator()(linear_combination& lc) const { call_(object_, lc); }

 private:
  void* object_;
  void (*call_)(void*, linear_combination&);
};

}  // namespace coprove::r1cs
