#pragma once
// The arrays of a large dependency graph (issue 16): hundreds of megabytes, grown one value at
// a time while the graph streams in, and read at random.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

namespace gpuplan {

/// Pages straight from the kernel for BigArray: zeroed, grown by mremap, which moves the page
/// tables instead of copying, and asked for as transparent huge pages (MADV_HUGEPAGE): the
/// graph's arrays are read at random, and on a virtual machine a TLB miss on 4 KiB pages is a
/// two-level page walk (streamed_jsonproto at 1 M rules: 3.70 → 2.48 s with the graph, README
/// "Dependency graph"). They throw std::bad_alloc.
namespace big_pages {
void* map(std::size_t bytes);
void* grow(void* pages, std::size_t old_bytes, std::size_t new_bytes);
void unmap(void* pages, std::size_t bytes);
/// Asks the kernel for every page now, in one call, rather than a page fault at each first
/// write; only a hint (kernels before 5.14 ignore it).
void populate(void* pages, std::size_t bytes);
}  // namespace big_pages

/// A growable array of plain values on big_pages: like std::vector for the few things the
/// graph does with its arrays, but growing never copies or touches what it holds, and a
/// value-initialized array costs nothing until written (its pages come zeroed).
template <class T>
class BigArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  BigArray() = default;
  /// `size` copies of `value`; zeroes are not written (the pages come zeroed).
  explicit BigArray(std::size_t size, const T& value = T{}) { assign(size, value); }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  BigArray(BigArray&& other) noexcept { swap(other); }
  BigArray& operator=(BigArray&& other) noexcept {
    BigArray(std::move(other)).swap(*this);
    return *this;
  }
  ~BigArray() {
    if (data_) big_pages::unmap(data_, capacity_ * sizeof(T));
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](std::size_t i) {
    assert(i < size_);
    return data_[i];
  }
  const T& operator[](std::size_t i) const {
    assert(i < size_);
    return data_[i];
  }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& back() { return (*this)[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ >= populated_) make_room(1);
    data_[size_++] = value;
  }
  void append(const T* values, std::size_t count) {
    if (size_ + count > populated_) make_room(count);
    if (count) std::memcpy(data_ + size_, values, count * sizeof(T));
    size_ += count;
  }
  /// Room for `count` values; grows to at least twice what it held.
  void reserve(std::size_t count) {
    if (count <= capacity_) return;
    std::size_t grown = std::max(count, capacity_ * 2);
    grown = std::max<std::size_t>(grown, 4096 / sizeof(T));
    data_ = static_cast<T*>(data_ ? big_pages::grow(data_, capacity_ * sizeof(T), grown * sizeof(T))
                                  : big_pages::map(grown * sizeof(T)));
    capacity_ = grown;
  }
  /// Has every page of its capacity given now: for an array whose pages will all be written
  /// soon, cheaper than the page faults (which cost a tenth of growing the label table).
  void populate() {
    if (data_) big_pages::populate(data_, capacity_ * sizeof(T));
    populated_ = capacity_;
  }
  /// `size` copies of `value`, what it held gone.
  void assign(std::size_t size, const T& value) {
    BigArray fresh;
    fresh.reserve(size);
    fresh.size_ = size;
    if (!is_zero(value))
      for (std::size_t i = 0; i < size; ++i) fresh.data_[i] = value;
    swap(fresh);
  }
  /// Empties it, keeping no memory.
  void clear() { BigArray().swap(*this); }
  void swap(BigArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(populated_, other.populated_);
  }

 private:
  static bool is_zero(const T& value) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (unsigned char byte : bytes)
      if (byte != 0) return false;
    return true;
  }
  /// Room for `count` more values, their pages given ahead of the writes in pieces of 2 MiB
  /// (a huge page): one call instead of a page fault each (dear on a virtual machine), and at
  /// most 2 MiB given that the array never writes.
  void make_room(std::size_t count) {
    reserve(size_ + count);
    constexpr std::size_t ahead = (std::size_t{2} << 20) / sizeof(T);
    std::size_t until = std::min(capacity_, std::max(size_ + count, populated_ + ahead));
    std::size_t from = populated_ * sizeof(T) / 4096 * 4096;
    big_pages::populate(reinterpret_cast<char*>(data_) + from, until * sizeof(T) - from);
    populated_ = until;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t populated_ = 0;  ///< values whose pages were given (populate, make_room)
};

}  // namespace gpuplan
