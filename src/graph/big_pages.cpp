// BigArray's pages: anonymous mappings of transparent huge pages, grown by mremap.
#include <sys/mman.h>

#include <new>

#include "gpuplan/big_array.hpp"

namespace gpuplan::big_pages {

namespace {

constexpr std::size_t page = 4096;
std::size_t rounded(std::size_t bytes) { return (bytes + page - 1) / page * page; }

}  // namespace

void* map(std::size_t bytes) {
  bytes = rounded(bytes);
  void* pages = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) throw std::bad_alloc();
  madvise(pages, bytes, MADV_HUGEPAGE);  // a hint: the kernel may not have them; mremap keeps it
  return pages;
}

void* grow(void* pages, std::size_t old_bytes, std::size_t new_bytes) {
  void* grown = mremap(pages, rounded(old_bytes), rounded(new_bytes), MREMAP_MAYMOVE);
  if (grown == MAP_FAILED) throw std::bad_alloc();
  return grown;
}

void unmap(void* pages, std::size_t bytes) { munmap(pages, rounded(bytes)); }

void populate(void* pages, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  madvise(pages, rounded(bytes), MADV_POPULATE_WRITE);
#else
  (void)pages;
  (void)bytes;
#endif
}

}  // namespace gpuplan::big_pages
