// `sumlab report` on the determinism tables of small hand-written run folders in the formats the
// committed runs have (written before the studies counted the runs they made and applied the one
// classification rule everywhere): the report shows what those rows measured — the runs one shape
// really got, one shape never shape invariant, no figures for a failed subject, a claim about your
// subjects' repeated calls only over the calls that all returned. Rendering needs a Python with
// matplotlib; without one these tests skip (CI installs python3-matplotlib).
#include "tests/studies/run_sumlab.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

using sumlab::test::Result;
using sumlab::test::run;
using sumlab::test::slurp;

// A run folder named `study` holding a committed run's provenance.json and the given files.
fs::path run_folder(const std::string& name, const std::string& provenance_of,
                    const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path dir = sumlab::test::fresh_dir("report_classes_" + name + "_" + std::to_string(getpid())) / name;
  fs::create_directories(dir);
  fs::copy_file(fs::path(SUMLAB_SOURCE_DIR) / "data" / provenance_of / "provenance.json", dir / "provenance.json");
  for (const auto& [file, text] : files) std::ofstream(dir / file) << text;
  return dir;
}

std::string render(const fs::path& dir, Result& r) {
  const fs::path out = dir.parent_path() / "report";
  r = run("report " + dir.string() + " --out " + out.string());
  return r.code == 0 ? slurp(out / "report.md") : std::string();
}

// The old classes table: no runs column (the inputs table wrote the R asked for), zeros for a
// failed subject, "invariance by construction" for a library that picks its own launch.
TEST(ReportClasses, OldDeterminismTablesShowTheRunsMadeAndNoFiguresForFailures) {
  const std::string classes =
      "study,backend,kind,kernel,declared,measured,agreement,inputs,inputs_at_measured,witness,shapes_max,"
      "distinct_within_shape_max,distinct_across_shapes_max,spread_ulps_max,max_abs_ulps,model_mismatches,source,note\n"
      "determinism,cuda,gpu,gpu_cub,run_to_run,run_to_run,matches,1,1,float32 uniform n=2^20,1,1,1,0,3,,measured,"
      "\"takes no launch shape: one shape, invariance by construction\"\n"
      "determinism,cuda,external,slow_sum,shape_invariant,shape_invariant,matches,1,1,float32 uniform n=2^20,2,1,1,0,0,,"
      "measured,\n"
      "determinism,cuda,external,flaky,shape_invariant,failed,failed,1,1,float32 uniform n=2^20,0,0,0,0,0,,measured,"
      "calls failed on 1 of 1 inputs\n";
  const std::string runs_header =
      "study,backend,kind,kernel,dtype,dist,seed,n,shape,grid,block,vector,mapping,threads,source,runs,count,value,hex,"
      "ulps_from_rounded,abs_error,rel_error,reference_hex,model_hex,model_agrees,ms,note\n";
  auto value = [](const std::string& kernel, const std::string& shape, int runs) {
    return "determinism,cuda,external," + kernel + ",float32,uniform,1,1048576," + shape + ",,,,,,measured," +
           std::to_string(runs) + "," + std::to_string(runs) + ",1.5,0x3fc00000,0,0,0,0x3fc00000,,,1,\n";
  };
  const std::string runs = runs_header + value("gpu_cub", "default", 20) + value("slow_sum", "copy=1", 3) +
                           value("slow_sum", "copy=2", 2) + value("flaky", "a", 4);
  const fs::path dir = run_folder("determinism", "h200/determinism",
                                  {{"determinism_classes.csv", classes},
                                   {"determinism_runs.csv", runs},
                                   {"summary.json", "{\"runs_per_shape\": 20, \"max_shape_seconds\": 0.5}"}});
  Result r;
  const std::string md = render(dir, r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  // The runs one shape got (2), counted from determinism_runs.csv, not the 20 asked for.
  EXPECT_NE(md.find("| slow_sum | external | shape_invariant | shape_invariant | matches | 1 of 1 | 2 | 2 |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| gpu_cub | gpu | run_to_run | run_to_run | matches | 1 of 1 | 1 | 20 |"), std::string::npos)
      << md;
  // A failed subject: no figures (the table recorded zeros), and no claim of invariance by construction.
  EXPECT_NE(md.find("| flaky | external | shape_invariant | failed | failed | 1 of 1 |  |  | float32 uniform n=2^20 "
                    "|  |  |  |  |"),
            std::string::npos) << md;
  EXPECT_EQ(md.find("invariance by construction"), std::string::npos) << md;
  // What was measured, counted: one held, one failed; not "every declared class holds".
  EXPECT_NE(md.find("Of 3 declared classes: 2 hold as far as measured (2 as declared, 0 measured stronger), 0 "
                    "one_shape (one shape ran: invariance not measured), 1 failed"),
            std::string::npos) << md;
}

// The old dot table: a CPU subject's one configuration recorded shape_invariant, runs the --runs
// asked for although it was called once.
TEST(ReportClasses, OldDotTableShowsOneShapeAsRunToRunAndSaysRunsAreAsRecorded) {
  const std::string det =
      "backend,dist,n,seed,algorithm,shapes,runs,distinct_runs,distinct_shapes,declared,measured,consistent\n"
      "cuda,normal,1024,1,cpu_serial_dot,1,3,1,1,shape_invariant,shape_invariant,1\n"
      "cuda,normal,1024,1,gpu_dot,5,3,1,5,run_to_run,run_to_run,1\n";
  const std::string errors =
      "backend,dist,n,seed,algorithm,kind,shape,value_hex,exact_hex,abs_error,bound,verdict,ulps,gpu_equals_model,"
      "distinct_runs,ms\n"
      "cuda,normal,1024,1,cpu_serial_dot,cpu,-,0x3f800000,0x3f800000,0,1e-6,within,0,,1,\n"
      "cuda,normal,1024,1,gpu_dot,cuda,1x32,0x3f800000,0x3f800000,0,1e-6,within,0,1,1,0.01\n";
  const fs::path dir = run_folder("dot", "h200/dot", {{"dot_determinism.csv", det}, {"dot_errors.csv", errors}});
  Result r;
  const std::string md = render(dir, r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(md.find("| normal | 1024 | 1 | cpu_serial_dot | 1 | 3 | 1 | 1 | shape_invariant | run_to_run (one call) "
                    "| one_shape |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| normal | 1024 | 1 | gpu_dot | 5 | 3 | 1 | 5 | run_to_run | run_to_run | matches |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("called once per cell"), std::string::npos) << md;
}

TEST(ReportClasses, SegmentedOneShapeIsNotShapeInvariant) {
  const std::string det =
      "study,backend,dtype,values,distribution,segments,mean_size,n,seed,strategy,shapes,distinct_across_shapes,runs,"
      "distinct_across_runs,declared,measured,consistent\n"
      "segmented,cuda,float64,uniform,uniform,65536,16,1048576,1,cub_segmented_reduce,1,1,3,1,run_to_run,"
      "shape_invariant,1\n"
      "segmented,cuda,float64,uniform,uniform,65536,16,1048576,1,warp_per_segment,2,1,3,1,shape_invariant,"
      "shape_invariant,1\n";
  const fs::path dir = run_folder("segmented", "h200/segmented", {{"segmented_determinism.csv", det}});
  Result r;
  const std::string md = render(dir, r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(md.find("| cub_segmented_reduce | 1 | 1 | 3 | 1 | run_to_run | run_to_run | 1 | matches |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| warp_per_segment | 2 | 1 | 3 | 1 | shape_invariant | shape_invariant | 1 | matches |"),
            std::string::npos) << md;
}

// Your variance subjects: one always failing, one working; the claim about repeated calls is made
// over the working one's cells only, and the failing one is named.
TEST(ReportClasses, VarianceSubjectsClaimOnlyOverCompletedCalls) {
  const std::string header =
      "study,backend,dtype,rows,cols,offset,seed,method,layout,block,median_rel_error,max_rel_error,"
      "negative_variance_rows,nan_variance_rows,nan_output_rows,ms,us_per_row,bound_us_per_row,time_over_bound,"
      "copy_gbps,bytes,max_out_abs_error,runs,distinct_outputs,note\n";
  std::string rows = header;
  for (const char* offset : {"0", "10"}) {
    rows += std::string("variance,model,float32,64,1024,") + offset +
            ",1,two_pass,warp_per_row,256,3e-8,1e-7,0,0,0,,,,,,524800,6e-7,,,\n";
    rows += std::string("variance,model,float32,64,1024,") + offset +
            ",1,bad,external,,,,,,,,,,,,524800,,1,,RuntimeError: nope\n";
    rows += std::string("variance,model,float32,64,1024,") + offset +
            ",1,good,external,,2e-8,5e-8,0,0,,,,,,,524800,,2,1,\n";
  }
  const fs::path dir = run_folder("variance", "h200/variance", {{"row_variance.csv", rows}});
  Result r;
  const std::string md = render(dir, r);
  SKIP_WITHOUT_MATPLOTLIB(r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(md.find("every configuration gave the same bits"), std::string::npos) << md;
  EXPECT_EQ(md.find("called 1, 2 times"), std::string::npos) << md;
  EXPECT_NE(md.find("in the 2 whose calls all returned, each configuration was called 2 times; every one of them "
                    "gave the same bits in every call; 2 failed (bad (float32))"),
            std::string::npos) << md;
}

}  // namespace
