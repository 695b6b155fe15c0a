// CPU features the fields' multiplication paths are chosen by, read from CPUID.
#include <coprove/field/detail/limbs.hpp>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

namespace coprove::field::detail {

bool cpu_has_bmi2_and_adx() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  constexpr unsigned bmi2 = 1u << 8, adx = 1u << 19;  // CPUID.(EAX=7,ECX=0):EBX
  return (ebx & bmi2) != 0 && (ebx & adx) != 0;
#else
  return false;
#endif
}

bool cpu_has_sha_extensions() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  constexpr unsigned ssse3 = 1u << 9, sse41 = 1u << 19;  // CPUID.1:ECX
  if ((ecx & ssse3) == 0 || (ecx & sse41) == 0) return false;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  constexpr unsigned sha = 1u << 29;  // CPUID.(EAX=7,ECX=0):EBX
  return (ebx & sha) != 0;
#else
  return false;
#endif
}

}  // namespace coprove::field::detail
