#pragma once
// Values that are empty in nearly every test or unit, held behind one pointer: a field every
// record carries costs 8 bytes for all of them and the value's size only where it is set.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpuplan {

/// An optional value held on the heap: one pointer while empty, as it is in nearly every
/// assignment, where a std::optional<std::map> took 56 bytes. Copies copy the value.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT(google-explicit-constructor)
  Boxed(const Boxed& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) { return *this = Boxed(other); }
  Boxed& operator=(Boxed&&) noexcept = default;

  explicit operator bool() const { return value_ != nullptr; }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return value_.get(); }
  T* operator->() { return value_.get(); }
  T& emplace() { return *(value_ = std::make_unique<T>()); }

 private:
  std::unique_ptr<T> value_;
};

/// A list that reads like a std::vector and costs one pointer (8 bytes, not 24) while empty, as a
/// test's exec_properties and a classified test's annotations are in nearly every test held
/// (`classify`'s peak memory, README "Performance"). Copies copy the items; clear() frees them.
template <typename T>
class BoxedVector {
 public:
  BoxedVector() = default;
  BoxedVector(std::initializer_list<T> items) {
    if (items.size()) items_ = std::make_unique<std::vector<T>>(items);
  }
  BoxedVector(const BoxedVector& other)
      : items_(other.empty() ? nullptr : std::make_unique<std::vector<T>>(*other.items_)) {}
  BoxedVector(BoxedVector&&) noexcept = default;
  BoxedVector& operator=(const BoxedVector& other) { return *this = BoxedVector(other); }
  BoxedVector& operator=(BoxedVector&&) noexcept = default;

  const T* begin() const { return items_ ? items_->data() : nullptr; }
  const T* end() const { return items_ ? items_->data() + items_->size() : nullptr; }
  T* begin() { return items_ ? items_->data() : nullptr; }
  T* end() { return items_ ? items_->data() + items_->size() : nullptr; }
  bool empty() const { return !items_ || items_->empty(); }
  std::size_t size() const { return items_ ? items_->size() : 0; }
  const T& operator[](std::size_t i) const { return (*items_)[i]; }
  const T& at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("BoxedVector::at");
    return (*items_)[i];
  }
  void push_back(T item) { items().push_back(std::move(item)); }
  /// The vector itself, made when there is none, for what only a vector does (insert at a place).
  std::vector<T>& items() {
    if (!items_) items_ = std::make_unique<std::vector<T>>();
    return *items_;
  }
  /// Empties it, keeping no memory.
  void clear() { items_.reset(); }
  friend bool operator==(const BoxedVector& a, const BoxedVector& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  std::unique_ptr<std::vector<T>> items_;
};

}  // namespace gpuplan
