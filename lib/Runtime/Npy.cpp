//===- Npy.cpp - read and write float32 .npy files ------------------------===//
//
// Parses the header dictionary of a version 1.0/2.0 .npy file and accepts
// only '<f4' in C order, which is what kb buffers hold.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace kb::runtime {

NpyArray readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path + " is not a .npy file");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    unsigned char l[2];
    in.read(reinterpret_cast<char *>(l), 2);
    headerLen = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    in.read(reinterpret_cast<char *>(l), 4);
    headerLen = l[0] | (l[1] << 8) | (l[2] << 16) | (uint32_t(l[3]) << 24);
  }
  std::string header(headerLen, '\0');
  in.read(header.data(), headerLen);
  if (header.find("'descr': '<f4'") == std::string::npos)
    throw std::runtime_error(path + ": kb-run reads float32 ('<f4') arrays only");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": kb-run reads C-order arrays only");
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'shape': \\(([^)]*)\\)")))
    throw std::runtime_error(path + ": no shape in the .npy header");
  NpyArray a;
  std::stringstream dims(m[1].str());
  std::string tok;
  int64_t n = 1;
  while (std::getline(dims, tok, ',')) {
    if (tok.find_first_not_of(" ") == std::string::npos)
      continue;
    a.shape.push_back(std::stoll(tok));
    n *= a.shape.back();
  }
  a.data.resize(n);
  if (!in.read(reinterpret_cast<char *>(a.data.data()), n * 4))
    throw std::runtime_error(path + ": file ends before its " +
                             std::to_string(n) + " elements");
  return a;
}

void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data) {
  std::string dims;
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
    n *= shape[i];
  }
  if (shape.size() == 1)
    dims += ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       dims + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw std::runtime_error("cannot write " + path);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char l[2] = {char(len & 0xff), char(len >> 8)};
  out.write(l, 2);
  out << header;
  out.write(reinterpret_cast<const char *>(data), n * 4);
  if (!out)
    throw std::runtime_error("failed writing " + path);
}

} // namespace kb::runtime
