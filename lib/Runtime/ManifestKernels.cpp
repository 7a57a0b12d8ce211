//===- ManifestKernels.cpp - the manifest's kernels -----------------------===//
//
// kernels[]: each kernel's name, files, launch sizes against CUDA's limits,
// arguments, the program ops it computes against those arguments, and the
// workspaces of a split_global softmax or a stream-K matmul against the
// compiler's own size formulas; then that every output is written.
//
//===----------------------------------------------------------------------===//

#include "ManifestParsing.h"
#include "kb/Transforms/StreamK.h"

#include <algorithm>
#include <regex>

namespace kb::runtime::manifest {

void parseKernels(const json &j, ParseState &st) {
  Manifest &m = st.m;
  const std::map<std::string, size_t> &index = st.index;
  const std::set<std::string> &written = st.written;
  auto bufferOf = [&](const std::string &name) { return st.bufferOf(name); };
  const json &ks = array(field(j, "kernels", "manifest"), "kernels", true);
  std::set<std::string> kernelNames;
  std::vector<int> opKernel(m.program.size(), -1);
  std::set<std::string> kernelOutputs;
  for (size_t i = 0; i < ks.size(); ++i) {
    std::string where = "kernels[" + std::to_string(i) + "]";
    const json &kj = ks[i];
    Kernel k;
    k.name = str(kj, "name", where);
    if (!isIdentifier(k.name))
      fail(where + ".name '" + k.name.substr(0, 40) +
           "' is not a PTX identifier");
    if (!kernelNames.insert(k.name).second)
      fail(where + ".name '" + k.name + "' appears twice");
    k.ptx = str(kj, "ptx", where);
    if (const json *c = opt(kj, "cubin"))
      k.cubin = asString(*c, where + ".cubin");
    std::string named = where + " (" + k.name + ")";

    auto dims3 = [&](const char *key) {
      std::string path = where + "." + key;
      const json &v = array(field(kj, key, where), path);
      if (v.size() != 3)
        fail(path + " needs 3 sizes (x, y, z), has " +
             std::to_string(v.size()));
      return path;
    };
    std::string gp = dims3("grid");
    for (int d = 0; d < 3; ++d)
      k.grid[d] = asInt(kj["grid"][d], gp + "[" + std::to_string(d) + "]", 1,
                        d == 0 ? BundleLimits::gridX : BundleLimits::gridYZ,
                        "CUDA's limit " +
                            std::to_string(d == 0 ? BundleLimits::gridX
                                                  : BundleLimits::gridYZ));
    std::string bp = dims3("block");
    for (int d = 0; d < 3; ++d)
      k.block[d] =
          asInt(kj["block"][d], bp + "[" + std::to_string(d) + "]", 1,
                d == 2 ? BundleLimits::blockZ : BundleLimits::blockThreads,
                "CUDA's limit " +
                    std::to_string(d == 2 ? BundleLimits::blockZ
                                          : BundleLimits::blockThreads));
    // Each factor is at most 1024 here, so the product cannot overflow.
    if (k.threads() > BundleLimits::blockThreads)
      fail(bp + ": " + named + " asks for " + std::to_string(k.threads()) +
           " threads per block; at most 1024");
    if (opt(kj, "cluster")) {
      std::string cp = dims3("cluster");
      for (int d = 0; d < 3; ++d) {
        k.cluster[d] = asInt(
            kj["cluster"][d], cp + "[" + std::to_string(d) + "]", 1,
            BundleLimits::clusterBlocks, "the limit of 16 blocks a cluster");
        if (k.grid[d] % k.cluster[d] != 0)
          fail(named + " cluster size " + std::to_string(k.cluster[d]) +
               " does not divide grid size " + std::to_string(k.grid[d]));
      }
      if (k.clusterBlocks() > BundleLimits::clusterBlocks)
        fail(named + " asks for clusters of " +
             std::to_string(k.clusterBlocks()) + " blocks; at most 16");
    }
    if (const json *d = opt(kj, "dynamic_shared_bytes"))
      k.dynamicSharedBytes =
          asInt(*d, where + ".dynamic_shared_bytes", 0,
                BundleLimits::dynamicSharedBytes,
                "the 227 KB (232448 bytes) of shared memory a block can have");
    if (const json *c = opt(kj, "co_resident_blocks"))
      k.coResidentBlocks =
          asInt(*c, where + ".co_resident_blocks", 1, BundleLimits::gridX,
                "CUDA's limit " + std::to_string(BundleLimits::gridX));
    if (const json *d = opt(kj, "dependent_launch"))
      k.dependentLaunch = asBool(*d, where + ".dependent_launch");

    const json &args = array(field(kj, "args", where), where + ".args", true);
    if (args.size() > 512)
      fail(where + ".args: " + std::to_string(args.size()) +
           " arguments exceed the 4 KB of kernel parameters");
    for (size_t a = 0; a < args.size(); ++a) {
      std::string ap = where + ".args[" + std::to_string(a) + "]";
      std::string name = asString(args[a], ap);
      if (!bufferOf(name))
        fail(ap + ": " + named + " names an unknown buffer \"" +
             name.substr(0, 40) + "\"");
      k.args.push_back(name);
    }
    const Buffer &out = *bufferOf(k.args.back());
    if (out.role == "tensor_map")
      fail(named + " writes tensor map '" + out.name + "' as its output");
    if (out.role == "input" || out.role == "workspace")
      fail(where + ".args: " + named + "'s last argument (its output) '" +
           out.name + "' is a buffer of role " + out.role);
    if (out.shape.empty())
      fail(where + ".args: " + named + "'s output '" + out.name +
           "' has rank 0");
    kernelOutputs.insert(out.name);

    if (const json *ops = opt(kj, "ops")) {
      array(*ops, where + ".ops");
      for (size_t q = 0; q < ops->size(); ++q) {
        const json &o = (*ops)[q];
        std::string qp = where + ".ops[" + std::to_string(q) + "]";
        if (!o.is_number_integer() || o.get<int64_t>() < 0 ||
            o.get<uint64_t>() >= m.program.size())
          fail(named + " names op " + shown(o) +
               ", which the program does not have");
        size_t idx = o.get<size_t>();
        if (opKernel[idx] >= 0)
          fail(qp + ": op " + std::to_string(idx) + " is computed by kernels[" +
               std::to_string(opKernel[idx]) + "] already");
        if (!k.ops.empty() && idx <= k.ops.back())
          fail(qp + ": a kernel's ops must be listed in program order");
        opKernel[idx] = static_cast<int>(i);
        k.ops.push_back(idx);
      }
    }
    if (const json *c = opt(kj, "config")) {
      if (!c->is_string())
        fail(where + ".config must be a string (#kb.config<...>), not " +
             typeName(*c));
      k.config = c->get<std::string>();
      checkKernelConfig(k, where);
    }
    if (const json *r = opt(kj, "resources")) {
      std::string w = where + ".resources";
      if (!r->is_object())
        fail(w + " must be an object, not " + typeName(*r));
      k.resources.known = true;
      auto res = [&](const char *key, int64_t hi) {
        const json *v = opt(*r, key);
        return v ? static_cast<int>(asInt(*v, w + "." + key, 0, hi)) : 0;
      };
      k.resources.registers = res("registers", 255);
      k.resources.sharedStaticBytes = res("shared_static_bytes", 48 * 1024);
      k.resources.stackBytes = res("stack_bytes", 1 << 24);
      k.resources.spillStoreBytes = res("spill_store_bytes", 1 << 24);
      k.resources.spillLoadBytes = res("spill_load_bytes", 1 << 24);
      res("barriers", 16);
      if (k.resources.sharedStaticBytes + k.dynamicSharedBytes >
          BundleLimits::dynamicSharedBytes)
        fail(w + ".shared_static_bytes: " + named + " uses " +
             std::to_string(k.resources.sharedStaticBytes +
                            k.dynamicSharedBytes) +
             " bytes of shared memory in all, more than 232448");
    }

    // The kernel's ops against its arguments: what the checks read and
    // write must be what the kernel is given.
    if (!k.ops.empty()) {
      std::set<std::string> argSet(k.args.begin(), k.args.end());
      std::set<std::string> local;
      bool hasMatmul = false, hasTranspose = false;
      for (size_t q = 0; q < k.ops.size(); ++q) {
        const ProgramOp &op = m.program[k.ops[q]];
        std::string op_where =
            "program[" + std::to_string(k.ops[q]) + "] (" + op.op + ")";
        if (!op.kernel.empty() && op.kernel != k.name)
          fail(op_where + ".kernel is '" + op.kernel + "', but " + named +
               " lists it");
        for (const std::string &in : op.inputs) {
          if (bufferOf(in)) {
            if (!argSet.count(in))
              fail(op_where + " reads buffer '" + in +
                   "', which is not among " + named + "'s args");
          } else if (!local.count(in)) {
            fail(op_where + " reads '" + in +
                 "', a value of another kernel's registers");
          }
        }
        if (bufferOf(op.output)) {
          if (!argSet.count(op.output))
            fail(op_where + " writes buffer '" + op.output +
                 "', which is not among " + named + "'s args");
        } else {
          local.insert(op.output);
        }
        if (op.op == "kb.matmul") {
          hasMatmul = true;
          if (q != 0)
            fail(op_where + ": a matmul must be its kernel's first op (" +
                 named + ")");
        }
        hasTranspose |= op.op == "kb.transpose" || op.op == "kb.pad";
      }
      if (hasTranspose && k.ops.size() != 1)
        fail(named + ": a transpose or pad is a kernel of its own");
      const ProgramOp &last = m.program[k.ops.back()];
      // An attention is a kernel of its own; with a log-sum-exp its args end
      // in the output, then the lse (docs/bundle.md).
      bool attention = last.op == "kb.attention";
      if (attention && k.ops.size() != 1)
        fail(named + ": an attention is a kernel of its own");
      std::string lse = attention ? last.attrString("lse_output", "") : "";
      if (!lse.empty() && (k.args.size() < 2 || k.args.back() != lse))
        fail(named + "'s attention writes its log-sum-exp to '" + lse +
             "', which must be its last arg");
      const std::string &written =
          lse.empty() ? k.args.back() : k.args[k.args.size() - 2];
      if (last.output != written)
        fail(named + "'s last op writes '" + last.output +
             "', but its output (last arg) is '" + written + "'");
      // (A norm's weight and bias are per column, and a reduce's input has
      // a row for each output value: parseProgram checked their shapes.)
      // (A rotary's cos and sin tables are per position and pair.)
      auto perColumnOrRows = [&](const ProgramOp &p, const std::string &in) {
        bool norm = p.op == "kb.layer_norm" || p.op == "kb.rms_norm";
        return p.op == "kb.reduce" ||
               ((norm || p.op == "kb.rotary") && in != p.inputs[0]);
      };
      if (!hasMatmul && !hasTranspose && !attention)
        for (size_t q : k.ops)
          for (const std::string &in : m.program[q].inputs)
            if (const Buffer *b = bufferOf(in))
              if (b->elements() != out.elements() &&
                  !(m.program[q].op == "kb.bias_add" &&
                    in == m.program[q].inputs[1]) &&
                  !perColumnOrRows(m.program[q], in) &&
                  m.program[q].op != "kb.split_sum")
                fail("program[" + std::to_string(q) + "] (" + m.program[q].op +
                     ") reads '" + in + "' of " + shapeStr(b->shape) +
                     " in a kernel writing " + shapeStr(out.shape));
    }

    // A workspace belongs to a split_global softmax, which indexes it by
    // its output's rows and its blocks per row: a hand-edited size would
    // let the kernel write past it. (The compiler's twin of this formula is
    // splitGlobalWorkspaceWords in KBDialect.h.)
    // A stream-K matmul's (reduce = "stream") holds four flags a block of
    // its persistent grid, then the partial tiles of the tiles it splits,
    // which the kernel indexes by its tile, grid and K
    // (streamKWorkspaceWords, the compiler's own formula).
    bool streamK = k.config.find("reduce = \"stream\"") != std::string::npos;
    for (const std::string &a : k.args) {
      const Buffer &ws = *bufferOf(a);
      if (ws.role != "workspace")
        continue;
      if (streamK) {
        static const std::regex blockRe(
            "block = \\[([0-9]{1,6}), ([0-9]{1,6}), ([0-9]{1,6})\\]");
        std::smatch bmatch;
        // A (M x K): the first input of the kernel's first op, its matmul
        // (a fusion's kernel arguments follow its operands, bias first
        // perhaps).
        const Buffer *lhs = nullptr;
        if (!k.ops.empty() && k.ops.front() < m.program.size() &&
            !m.program[k.ops.front()].inputs.empty())
          lhs = bufferOf(m.program[k.ops.front()].inputs[0]);
        int64_t need = -1;
        if (std::regex_search(k.config, bmatch, blockRe) && lhs &&
            lhs->shape.size() >= 2 && out.shape.size() >= 2 && k.grid[0] > 0) {
          int64_t bm = std::stoll(bmatch[1]), bn = std::stoll(bmatch[2]),
                  bk = std::stoll(bmatch[3]);
          int64_t m = out.shape[out.shape.size() - 2], n = out.shape.back();
          int64_t kk = lhs->shape.back(), g = k.grid[0];
          if (bm > 0 && bn > 0 && bk > 0) {
            int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
            need = mlir::kb::streamKWorkspaceWords(tiles, (kk + bk - 1) / bk,
                                                   g, bm, bn);
          }
        }
        if (k.args.back() == a || k.coResidentBlocks != k.grid[0] ||
            ws.elements() != need)
          fail(named + " (stream-K) takes workspace '" + a + "' of " +
               std::to_string(ws.elements()) + " words with " +
               std::to_string(k.coResidentBlocks) +
               " co-resident blocks; its grid of " +
               std::to_string(k.grid[0]) + " blocks needs that many resident" +
               (need >= 0 ? " and " + std::to_string(need) + " words"
                          : " and a config with its block"));
        continue;
      }
      // A whole-tensor reduce's: the count, a spare word, a partial a block
      // (wholeReduceWorkspaceWords); no block waits for another.
      if (k.ops.size() == 1 && k.ops[0] < m.program.size() &&
          m.program[k.ops[0]].op == "kb.reduce" &&
          m.program[k.ops[0]].attrs.value("all", false)) {
        if (k.args.back() == a || ws.elements() != 2 + k.grid[0])
          fail(named + " (whole-tensor reduce) takes workspace '" + a +
               "' of " + std::to_string(ws.elements()) + " words; its grid of " +
               std::to_string(k.grid[0]) + " blocks needs " +
               std::to_string(2 + k.grid[0]));
        continue;
      }
      if (k.coResidentBlocks < 1 || k.args.back() == a)
        fail(named + " takes workspace '" + a +
             "' but declares no co_resident_blocks (or writes it as its "
             "output)");
      int64_t rows = out.elements() / out.shape.back();
      // rows < 2^38 and coResidentBlocks < 2^63: compare without overflow.
      int64_t perRow = (ws.elements() - 2) / 2;
      bool fits = ws.elements() >= 2 + 2 * rows &&
                  (ws.elements() - 2) % 2 == 0 && (perRow - rows) % rows == 0 &&
                  (perRow - rows) / rows == k.coResidentBlocks;
      if (!fits) {
        std::string need =
            k.coResidentBlocks <= (INT64_MAX / 4) / std::max<int64_t>(rows, 1)
                ? std::to_string(2 + 2 * rows + 2 * rows * k.coResidentBlocks)
                : "more";
        fail(named + " workspace '" + a + "' has " +
             std::to_string(ws.elements()) + " words; " + std::to_string(rows) +
             " rows of " + std::to_string(k.coResidentBlocks) +
             " blocks need " + need);
      }
    }
    m.kernels.push_back(k);
  }
  for (size_t i = 0; i < m.program.size(); ++i)
    if (opKernel[i] < 0 && !m.program[i].kernel.empty())
      fail("program[" + std::to_string(i) + "] (" + m.program[i].op +
           ") names kernel '" + m.program[i].kernel +
           "', which does not list it in its ops");
  for (const Buffer &b : m.buffers)
    if (b.role == "output" && !kernelOutputs.count(b.name) &&
        !written.count(b.name))
      fail("buffers[" + std::to_string(index.at(b.name)) + "] (" + b.name +
           ") is an output that no kernel writes");
}

} // namespace kb::runtime::manifest
