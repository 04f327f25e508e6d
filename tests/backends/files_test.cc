/// \file The runtime's file helpers (runtime/files.h, runtime/sha256.h): SHA-256 against
/// published and hashlib vectors; reads that refuse FIFOs, devices and directories and stop at
/// the file's size; writes that replace only a regular file of their own format and never go
/// through a link; the private-directory check.
#include "runtime/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/sha256.h"

namespace cinn_like::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A fresh, empty directory of this user's alone for one test.
std::string FreshDir(const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "/files_" + tag;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  return dir;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string& path) { return ReadWholeFile(path).value_or("<none>"); }

TEST(Sha256, KnownDigests) {
  // FIPS 180-4's examples and the million a's.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding's block boundaries, as Python's hashlib gives them.
  const std::pair<int, const char*> by_length[] = {
      {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
      {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
      {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
      {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
      {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
      {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
      {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
      {1000, "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371"}};
  for (const auto& [n, want] : by_length) {
    std::string bytes;
    for (int i = 0; i < n; ++i) bytes.push_back(static_cast<char>((i * 7 + 3) % 256));
    EXPECT_EQ(Sha256Hex(bytes), want) << n;
  }
}

TEST(Files, ReadsRefuseWhatIsNotARegularFile) {
  const std::string dir = FreshDir("read");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Refused at once, without waiting for a writer.
  auto from_fifo = ReadRegularFile(fifo, "the module file");
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_EQ(from_fifo.status().message(),
            "cannot read the module file " + fifo + ": it is a FIFO, not a regular file");
  EXPECT_THAT(ReadRegularFile("/dev/zero").status().message(),
              HasSubstr("/dev/zero: it is a character device, not a regular file"));
  EXPECT_THAT(ReadRegularFile(dir).status().message(), HasSubstr("it is a directory"));
  EXPECT_FALSE(ReadWholeFile(fifo).has_value());
  EXPECT_TRUE(absl::IsNotFound(ReadRegularFile(dir + "/missing").status()));

  // Bounded: a file larger than what the caller reads is refused, not read.
  WriteText(dir + "/ten", "0123456789");
  EXPECT_EQ(*ReadRegularFile(dir + "/ten", "", 10), "0123456789");
  EXPECT_THAT(ReadRegularFile(dir + "/ten", "cache entry", 9).status().message(),
              HasSubstr("cache entry " + dir + "/ten: it holds 10 bytes, more than the 9"));
  // A link to a regular file is read.
  fs::create_symlink(dir + "/ten", dir + "/link");
  EXPECT_EQ(ReadText(dir + "/link"), "0123456789");
}

TEST(Files, WritesReplaceOnlyARegularFileOfTheirFormat) {
  const std::string dir = FreshDir("write");
  const std::string path = dir + "/out.bin";
  // Nothing there, an empty file, or one of the format: written.
  ASSERT_TRUE(WriteFileAtomically(path, "MAGIC one", "MAGIC", "a magic file").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "MAGIC two", "MAGIC", "a magic file").ok());
  EXPECT_EQ(ReadText(path), "MAGIC two");
  WriteText(dir + "/empty", "");
  ASSERT_TRUE(WriteFileAtomically(dir + "/empty", "MAGIC", "MAGIC", "a magic file").ok());

  // A file of another format is left as it is.
  WriteText(dir + "/notes.txt", "the user's notes");
  absl::Status other = WriteFileAtomically(dir + "/notes.txt", "MAGIC", "MAGIC", "a magic file");
  EXPECT_EQ(other.message(), "refusing to overwrite " + dir + "/notes.txt: it is not a magic file");
  EXPECT_EQ(ReadText(dir + "/notes.txt"), "the user's notes");
  WriteText(dir + "/short", "MAG");  // shorter than the magic
  EXPECT_FALSE(WriteFileAtomically(dir + "/short", "MAGIC", "MAGIC", "a magic file").ok());

  // A directory, a FIFO (as a device node would be) and a link are never replaced, whatever
  // the format; the link's target is not written either.
  fs::create_directory(dir + "/sub");
  EXPECT_EQ(WriteFileAtomically(dir + "/sub", "MAGIC").message(),
            "refusing to replace " + dir + "/sub: it is a directory, not a regular file");
  EXPECT_TRUE(fs::is_directory(dir + "/sub"));
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_THAT(std::string(WriteFileAtomically(dir + "/fifo", "MAGIC").message()),
              HasSubstr(dir + "/fifo: it is a FIFO, not a regular file"));
  EXPECT_TRUE(fs::is_fifo(dir + "/fifo"));
  WriteText(dir + "/target", "MAGIC target");
  fs::create_symlink(dir + "/target", dir + "/link");
  EXPECT_THAT(std::string(WriteFileAtomically(dir + "/link", "MAGIC new", "MAGIC").message()),
              HasSubstr(dir + "/link: it is a symbolic link, not a regular file"));
  EXPECT_TRUE(fs::is_symlink(dir + "/link"));
  EXPECT_EQ(ReadText(dir + "/target"), "MAGIC target");
  // No temporary file is left behind by any of these.
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST(Files, InPlaceWritesDoNotFollowLinks) {
  const std::string dir = FreshDir("nofollow");
  WriteText(dir + "/precious", "keep me");
  fs::create_symlink(dir + "/precious", dir + "/dump.txt");
  absl::Status written = WriteFileNoFollow(dir + "/dump.txt", "dumped");
  EXPECT_EQ(written.message(),
            "cannot write " + dir + "/dump.txt: it is a symbolic link, which is not followed");
  EXPECT_EQ(ReadText(dir + "/precious"), "keep me");
  // A dangling link is not followed to create its target either.
  fs::create_symlink(dir + "/created", dir + "/dangling.txt");
  EXPECT_FALSE(WriteFileNoFollow(dir + "/dangling.txt", "dumped").ok());
  EXPECT_FALSE(fs::exists(dir + "/created"));
  // A regular file is truncated and written.
  WriteText(dir + "/plain.txt", "a longer old text");
  ASSERT_TRUE(WriteFileNoFollow(dir + "/plain.txt", "new").ok());
  EXPECT_EQ(ReadText(dir + "/plain.txt"), "new");
}

TEST(Files, PrivateDirectories) {
  const std::string dir = FreshDir("private");
  EXPECT_TRUE(CheckPrivateDirectory(dir).ok());
  fs::permissions(dir, fs::perms::owner_all | fs::perms::others_all, fs::perm_options::replace);
  EXPECT_EQ(CheckPrivateDirectory(dir).message(),
            "refusing " + dir +
                ": it is writable by others (mode 0707); make it the user's alone (chmod go-w)");
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_all, fs::perm_options::replace);
  EXPECT_THAT(std::string(CheckPrivateDirectory(dir).message()),
              HasSubstr("writable by its group (mode 0770)"));
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_exec,
                  fs::perm_options::replace);
  EXPECT_TRUE(CheckPrivateDirectory(dir).ok());  // others may read it, not change it

  // Another user's directory: "/" where this is not root; as root, one given to nobody.
  std::string foreign = "/";
  uid_t owner = 0;
  if (geteuid() == 0) {
    foreign = FreshDir("foreign");
    owner = 65534;
    ASSERT_EQ(chown(foreign.c_str(), owner, static_cast<gid_t>(-1)), 0);
  }
  EXPECT_THAT(std::string(CheckPrivateDirectory(foreign).message()),
              HasSubstr("refusing " + foreign + ": it is owned by user " + std::to_string(owner) +
                        ", not by this user"));
  EXPECT_THAT(std::string(CheckPrivateDirectory(dir + "/missing").message()),
              HasSubstr("cannot use " + dir + "/missing"));
  WriteText(dir + "/file", "x");
  EXPECT_THAT(std::string(CheckPrivateDirectory(dir + "/file").message()),
              HasSubstr("it is not a directory"));
}

}  // namespace
}  // namespace cinn_like::runtime
