#pragma once
// A shared-memory tree model that tracks which words each stage has written, and so can say what
// a missing barrier breaks (the seed text on a reduction tree with a barrier removed).
//
// The tree is the sequential-addressing block reduction: stage 0 stores thread t's value in word t;
// level l (h = P/2, P/4, .., 1) has each thread t < h with t + h < W add word t+h into word t. With
// a barrier after every stage, each level reads a snapshot of the previous one and the model
// returns the sum. Remove one barrier and the stages on either side of it form one barrier-free
// region in which any interleaving of the threads is legal; the model picks one legal schedule,
// threads in increasing index order (thread 0 runs its part of the region first), and records every
// read of a word whose writer has not yet stored it. Such a read is a data race: the model reports
// it (level, reader, word, writer) and gives NO numeric result for the run. A plausible sum from
// some other interleaving would not make the program safe, so none is offered.
//
// The CUDA twin is gpu_racy_tree (barrier after the loads removed), which exists only so that
// compute-sanitizer --tool racecheck can be shown catching the same hazard.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/launch_shape.hpp"
#include "core/order_model/reduce_ops.hpp"

namespace sumlab::order_model {

struct UnwrittenRead {
  int level;   // 1 = the first tree level (after the loads, stage 0)
  int h;       // that level's partner distance
  int reader;  // thread that read
  int word;    // shared word it read
  int writer;  // thread whose store it needed
};

template <class T> struct SmemTreeTrace {
  std::optional<T> value;             // nullopt when any read came before its write
  std::vector<UnwrittenRead> races;   // empty with every barrier in place
  int levels = 0;
};

// One line per race: "level 1 (h=4): thread 0 read word 4 before thread 4 wrote it".
inline std::string describe(const UnwrittenRead& r) {
  return "level " + std::to_string(r.level) + " (h=" + std::to_string(r.h) + "): thread " +
         std::to_string(r.reader) + " read word " + std::to_string(r.word) + " before thread " +
         std::to_string(r.writer) + " wrote it";
}

// missing_barrier: -1 = every barrier present; 0 = the barrier between the loads and level 1 is
// removed (gpu_racy_tree); l >= 1 = the barrier between level l and level l+1 is removed.
template <class T>
SmemTreeTrace<T> smem_tree_trace(std::span<const T> values, int missing_barrier = -1) {
  using Op = PlainSumOp<T>;
  const int w = static_cast<int>(values.size());
  SmemTreeTrace<T> out;
  std::vector<T> words(values.begin(), values.end());
  // Which stage last wrote each word, and which thread: a word's last writer is always the thread
  // with that index (the load, then the levels where it is active).
  std::vector<int> written_at(static_cast<std::size_t>(w), 0);
  int level = 0;
  for (int h = pow2_ceil(w) / 2; h > 0; h >>= 1) {
    ++level;
    const std::vector<T> before = words;  // with the barrier: this level reads the last snapshot
    for (int t = 0; t < h && t + h < w; ++t) {
      const int partner = t + h;
      // The partner's last store happened in stage written_at[partner]; the only barrier that
      // could order it before this read is the one right after that stage (one barrier removed,
      // so only a store in the stage just before the missing barrier can be unordered, and only
      // if this read is in the very next stage).
      const int stage_of_store = written_at[static_cast<std::size_t>(partner)];
      if (stage_of_store == missing_barrier && level == missing_barrier + 1) {
        // Threads run in increasing order through the barrier-free region: t < partner runs its
        // read before the partner reaches its store.
        out.races.push_back({level, h, t, partner, partner});
      }
      words[static_cast<std::size_t>(t)] = Op::combine(before[static_cast<std::size_t>(t)],
                                                       before[static_cast<std::size_t>(partner)]);
      written_at[static_cast<std::size_t>(t)] = level;
    }
  }
  out.levels = level;
  if (out.races.empty() && w > 0) out.value = words[0];
  return out;
}

}  // namespace sumlab::order_model
