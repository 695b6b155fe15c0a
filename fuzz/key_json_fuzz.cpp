// libFuzzer target for a key directory's key.json (app::read_key_metadata, then app::read_key_dir
// as `coprove run --keys` and `serve` load a key): any bytes are metadata or a key_dir_error
// naming the file. The folder's params, vk and vk.json are empty files, so read_key_dir always
// ends in a refusal; what it may not do first is build a circuit that key.json claims and the key
// does not support (-malloc_limit_mb).
#include "fuzz_support.hpp"

#include "keys.hpp"

#include <fstream>

using namespace coprove;
namespace fs = std::filesystem;

namespace {

const fs::path& key_dir() {
  static const fs::path dir = [] {
    const fs::path made = fuzz::scratch_dir() / "key";
    fs::create_directories(made);
    for (const auto name : {app::params_file_name, app::vk_file_name, app::vk_json_file_name}) {
      std::ofstream(made / fs::path(std::string(name)), std::ios::binary | std::ios::trunc);
    }
    return made;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& dir = key_dir();
  fuzz::write_scratch("key/key.json", {data, size});
  try {
    (void)app::read_key_metadata(dir);
  } catch (const app::key_dir_error& e) {
    fuzz::expect_named(e, dir.string());
    return 0;
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  try {
    (void)app::read_key_dir(dir);
    fuzz::fail("a key directory of empty key files was accepted");
  } catch (const app::key_dir_error& e) {
    fuzz::expect_named(e, dir.string());
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
