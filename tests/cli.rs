//! The `wgpu-anim` command-line tool, run as a user would: `render` writes a picture in which
//! the model is visible, and a bad command line fails with one line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wgpu_anim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wgpu-anim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the wgpu-anim binary runs")
}

/// `wgpu-anim args` fails with status 1 and one line on stderr that says `says`.
fn assert_one_line_error(args: &[&str], says: &str) {
    let o = wgpu_anim(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(
        stderr.contains(says) && stderr.lines().count() == 1,
        "{args:?}: {stderr}"
    );
}

/// A fresh folder for this test's pictures.
fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("wgpu-anim-cli-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Decodes an RGBA8 PNG: (width, height, pixels).
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba, "{}", path.display());
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{}", path.display());
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Share of the pixels that differ (by more than a little) from every corner pixel's colour.
fn share_not_background(path: &Path) -> f64 {
    let (w, h, px) = decode(path);
    let at = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        [px[i], px[i + 1], px[i + 2]]
    };
    let corners = [at(0, 0), at(w - 1, 0), at(0, h - 1), at(w - 1, h - 1)];
    let differs = px
        .chunks_exact(4)
        .filter(|p| {
            corners
                .iter()
                .all(|c| (0..3).any(|k| (i16::from(p[k]) - i16::from(c[k])).abs() > 6))
        })
        .count();
    differs as f64 / f64::from(w * h)
}

fn render(args: &[&str], out: &Path) -> f64 {
    let mut all = vec!["render"];
    all.extend_from_slice(args);
    let out_s = out.to_str().unwrap();
    all.extend(["--out", out_s]);
    let o = wgpu_anim(&all);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{all:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "one line on stdout: {stdout}");
    assert!(stdout.contains(out_s), "{stdout}");
    assert!(out.is_file(), "{} was not written", out.display());
    share_not_background(out)
}

#[test]
fn render_draws_the_fox_and_simple_skin() {
    let dir = temp_dir("render");
    for (name, args) in [
        ("fox", &["assets/Fox/Fox.gltf", "--clip", "1", "--time", "0.3"][..]),
        (
            "fox-no-ground",
            &["assets/Fox/Fox.gltf", "--clip", "Walk", "--time", "0.3", "--no-ground"],
        ),
        (
            "fox-many",
            &[
                "assets/Fox/Fox.gltf",
                "--clip",
                "2",
                "--count",
                "4",
                "--size",
                "320x200",
                "--no-ground",
            ],
        ),
        ("simple-skin", &["assets/simple_skin/simple_skin.gltf"]),
        (
            "simple-skin-no-ground",
            &["assets/simple_skin/simple_skin.gltf", "--time", "2", "--no-ground"],
        ),
        (
            "rigid-no-ground",
            &["assets/InterpolationTest/InterpolationTest.gltf", "--no-ground"],
        ),
    ] {
        let out = dir.join(format!("{name}.png"));
        let share = render(args, &out);
        assert!(
            share > 0.02,
            "{name}: only {:.2} % of the pixels are not background",
            share * 100.0
        );
        if name == "fox-many" {
            assert_eq!(decode(&out).0, 320);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn render_errors_are_one_line_and_exit_one() {
    let dir = temp_dir("errors");
    let out = dir.join("x.png");
    let out = out.to_str().unwrap();
    for args in [
        &["render", "assets/Fox/Fox.gltf"][..],
        &["render", "assets/Fox/Fox.gltf", "--clip", "7", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--clip", "Swim", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--time", "inf", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--time", "soon", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--size", "0x10", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--size", "big", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--count", "0", "--out", out],
        &["render", "assets/Fox/Fox.gltf", "--out"],
        &["render", "assets/Fox/Fox.gltf", "--bogus", "--out", out],
        &["render", "--out", out],
        &["render", "assets/no/such.gltf", "--out", out],
        &["render", "assets/malformed/MissingBin/BoxTextured.gltf", "--out", out],
    ] {
        let o = wgpu_anim(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line expected: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        if args.len() == 2 {
            assert!(stderr.contains("--out"), "missing --out is named: {stderr}");
        }
    }
    assert!(!Path::new(out).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_writes_table_json_and_plot() {
    let dir = temp_dir("bench");
    let (json, plot) = (dir.join("bench.json"), dir.join("bench.png"));
    let o = wgpu_anim(&[
        "bench",
        "--characters",
        "20,40",
        "--frames",
        "2",
        "--workloads",
        "single-clip",
        "--clip-format",
        "raw,compressed",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "--view-characters",
        "500",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    // A row's path cell says how its GPU path ran each character.
    let row = |prefix: &str, n: u32| {
        stdout
            .lines()
            .any(|l| l.starts_with(prefix) && l.contains(&format!(" | {n} | ")))
    };
    assert!(row("| single-clip | raw | gpu-staged, ", 20), "{stdout}");
    assert!(row("| single-clip | compressed | gpu-fused, ", 20), "{stdout}");
    assert!(row("| single-clip | compressed | cpu-1 |", 40), "{stdout}");
    assert!(stdout.contains("cpu-all"), "{stdout}");
    // On a CPU adapter each GPU path runs a thread and a SIMD group per character.
    let (timestamps, ways) = wgpu_anim::gpu::headless_device().map_or((false, 1), |(device, _)| {
        (
            device.features().contains(wgpu::Features::TIMESTAMP_QUERY),
            if wgpu_anim::bench::is_cpu_adapter(&device) {
                2
            } else {
                1
            },
        )
    });
    let rows_expected = 2 * 2 * (2 * ways + 2);
    // Both clip formats and gpu-staged: the sample pass of each in alternate frames; both GPU
    // paths: the fused against the staged in alternate frames, per format; each at the smallest
    // count and each way of running a character, where the device has timestamps.
    let comparisons = if timestamps { ways + 2 * ways } else { 0 };
    let progress: Vec<&str> = stderr.lines().filter(|l| l.contains("] single-clip ")).collect();
    assert_eq!(
        progress.len(),
        rows_expected + comparisons,
        "one progress line per configuration and per format and path comparison: {stderr}"
    );
    assert!(
        progress[1].contains("left]"),
        "an estimate of the time left: {}",
        progress[1]
    );
    if timestamps {
        // The rows of the table under `title`: the lines from its header to the first that is not
        // a table's.
        let paired = |title: &str| {
            let after = stdout.split(title).nth(1).unwrap_or_default();
            let table = after.lines().skip_while(|l| !l.starts_with('|'));
            table
                .take_while(|l| l.starts_with('|'))
                .filter(|l| l.starts_with("| single-clip |"))
                .count()
        };
        assert_eq!(paired("raw and compressed clips in alternate frames"), ways, "{stdout}");
        assert_eq!(
            paired("the staged path on one crowd in alternate frames"),
            2 * ways,
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("| check |"),
        "every table has its check column: {stdout}"
    );
    let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), rows_expected);
    let (w, h, _) = decode(&plot);
    assert!(w > 0 && h > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_errors_are_one_line_and_exit_one() {
    for args in [
        &["bench", "--characters", "0"][..],
        &["bench", "--characters", "many"],
        &["bench", "--frames", "0"],
        &["bench", "--frames"],
        &["bench", "--workloads", "ballet"],
        &["bench", "--clip-format", "zip"],
        &["bench", "--paths", "gpu-quantum"],
        &["bench", "--bogus"],
    ] {
        let o = wgpu_anim(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line expected: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn cost_runs_its_sections_in_process_and_reports_errors_in_one_line() {
    // What `cost` runs under valgrind, here without it: every GPU pass and mirror stage, once.
    let o = wgpu_anim(&[
        "cost",
        "--inner",
        "--workloads",
        "single-clip",
        "--clip-format",
        "raw",
        "--characters",
        "20",
        "--repeats",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let sections: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let names: Vec<&str> = sections
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for stage in ["clock", "sample", "local_to_model", "palette"] {
        assert!(names.contains(&format!("gpu {stage}").as_str()), "{names:?}");
        assert!(names.contains(&format!("cpu {stage}").as_str()), "{names:?}");
    }
    assert!(
        sections
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["joint_samples"] == 20 * 53),
        "{stdout}"
    );
    for args in [
        &["cost", "--valgrind", "/nonexistent/valgrind"][..],
        &["cost", "--repeats", "0"],
        &["cost", "--inner", "--workloads", "single-clip,layered"],
        &["cost", "--baseline", "/nonexistent/baseline.json"],
        &["cost", "--encode", "--baseline", "/nonexistent/baseline.json"],
        &["cost", "--transitions", "--baseline", "/nonexistent/baseline.json"],
        &["cost", "--inner", "--transitions", "--characters", "0"],
    ] {
        let o = wgpu_anim(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line expected: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn cost_transitions_runs_the_three_crowds() {
    // What `cost --transitions` runs under valgrind, here without it: the crowds' size and the
    // frames counted of each, which give the number of sections its dumps must match.
    let o = wgpu_anim(&["cost", "--inner", "--transitions", "--characters", "8"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let sections: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(sections["characters"], 8);
    assert_eq!(sections["on_page"], 8);
    assert_eq!(sections["frames"], u64::from(wgpu_anim::bench::COUNTED_FRAMES));
}

#[test]
fn cost_encode_runs_a_culled_frame_of_each_field_on_both_paths() {
    // What `cost --encode` runs under valgrind, here without it: the page count and dispatches
    // of each field, staged and then fused.
    let o = wgpu_anim(&["cost", "--inner", "--encode", "--view-characters", "100,400"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let sections: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let rows: Vec<(String, u64, u64, u64)> = sections
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let n = |k: &str| s[k].as_u64().unwrap();
            (
                s["path"].as_str().unwrap().to_owned(),
                n("characters"),
                n("pages"),
                n("dispatches"),
            )
        })
        .collect();
    // Staged with culling: clock, cull, sample, local_to_model and palette per page; fused:
    // clock, fused and cull.
    let expected = [
        ("staged", 100, 1, 5),
        ("staged", 400, 1, 5),
        ("fused", 100, 1, 3),
        ("fused", 400, 1, 3),
    ]
    .map(|(p, c, g, d)| (p.to_owned(), c, g, d));
    assert_eq!(rows, expected, "{stdout}");
    let o = wgpu_anim(&["cost", "--encode", "--view-characters", "0"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not a positive whole number"), "{stderr}");
}

#[test]
fn inspect_reports_the_levels_the_fused_pass_walks() {
    // The Fox's 25 joints lie nine deep: nine steps of 64 threads, 25 of their 576 busy.
    let o = wgpu_anim(&["inspect", "assets/Fox/Fox.gltf"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = stdout
        .lines()
        .find(|l| l.contains("hierarchy:"))
        .expect("a hierarchy line");
    assert!(
        line.contains("9 levels") && line.contains("9 steps of 64 threads, 4.3 % of them busy"),
        "{line}"
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    // `wgpu-anim inspect FILE | head -0`: the pipe is closed before the tool has loaded the file,
    // so its first write finds no reader.
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wgpu-anim"))
        .args(["inspect", "assets/cmu/cmu_01_03.glb"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn compress_reports_writes_a_file_sample_reads_and_refuses_a_bad_setting() {
    let dir = temp_dir("compress");
    let out = dir.join("walk.wgac");
    let o = wgpu_anim(&[
        "compress",
        "assets/Fox/Fox.gltf",
        "--clip",
        "1",
        "--segment-frames",
        "32",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["segment_frames"], 32);
    let clip = &report["clips"][0];
    assert_eq!(clip["clip"], "Walk");
    let (raw, compressed) = (
        clip["raw_bytes"].as_f64().unwrap(),
        clip["compressed_bytes"].as_f64().unwrap(),
    );
    assert!(compressed > 0.0 && compressed < raw, "{clip}");
    assert!(clip["max_error_cm"].as_f64().unwrap() <= 0.01 + 1e-9, "{clip}");
    let mean = clip["mean_error_cm"].as_f64().unwrap();
    assert!(mean > 0.0 && mean <= clip["p99_error_cm"].as_f64().unwrap(), "{clip}");
    // The blob's parts add up to less than the clip's bytes (which add its raw keys and records).
    let parts = &clip["blob_bytes"];
    let blob: f64 = ["clip", "records", "bitstream"]
        .iter()
        .map(|k| parts[k].as_f64().unwrap())
        .sum();
    assert!(parts["records"].as_f64().unwrap() > 0.0 && blob < compressed, "{clip}");
    // No ACL figure is on file for the Fox; one is for the CMU take at 30 Hz, shown only where
    // the run measures as ACL's did (its threshold and shell).
    assert!(clip["acl"].is_null(), "{clip}");
    let acl = |extra: &[&str]| {
        let mut args = vec![
            "compress",
            "assets/cmu/cmu_01_03.glb",
            "--unit-cm",
            "5.6444",
            "--rate",
            "30",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = wgpu_anim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        report["clips"][0]["acl"].clone()
    };
    let figure = acl(&[]);
    assert_eq!(figure["bytes"], 125_811, "{figure}");
    assert!(figure["ratio_to_acl"].as_f64().unwrap() < 1.0, "{figure}");
    assert!(acl(&["--threshold", "0.02"]).is_null());

    // The file plays through the GPU.
    let o = wgpu_anim(&[
        "sample",
        "assets/Fox/Fox.gltf",
        "--clip",
        "1",
        "--time",
        "0.3",
        "--compressed",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("'Walk' at 0.3000 s"));

    // A segment length the decoder cannot shift by: one line naming the file, exit 1.
    let o = wgpu_anim(&["compress", "assets/Fox/Fox.gltf", "--segment-frames", "12"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_default();
    assert!(line.contains("Fox.gltf") && line.contains("power of two"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sample_never_prints_a_pose_beyond_reach() {
    // simple_skin with every joint scaled by 1e7: each value finite, 1e14 down the chain.
    let source = std::fs::read("assets/simple_skin/simple_skin.gltf").unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&source).unwrap();
    for j in doc["skins"][0]["joints"].as_array().unwrap().clone() {
        doc["nodes"][j.as_u64().unwrap() as usize]["scale"] = serde_json::json!([1e7, 1e7, 1e7]);
    }
    let dir = temp_dir("reach");
    let file = dir.join("huge.gltf");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    for path in ["--cpu", "--reference"] {
        let o = wgpu_anim(&[
            "sample",
            file.to_str().unwrap(),
            "--clip",
            "0",
            "--time",
            "0.5",
            "--json",
            path,
        ]);
        let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(1), "{path}: {stdout} {stderr}");
        assert!(!stdout.contains("null"), "{path}: {stdout}");
        let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_default();
        assert!(line.contains("huge.gltf") && line.contains("reach"), "{path}: {stderr}");
    }
    // The file as it is: numbers only.
    let o = wgpu_anim(&[
        "sample",
        "assets/simple_skin/simple_skin.gltf",
        "--clip",
        "0",
        "--time",
        "0.5",
        "--json",
        "--cpu",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("null"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bake_vat_reports_writes_a_file_and_refuses_bad_input() {
    let dir = temp_dir("bake_vat");
    let out = dir.join("walk.vat");
    let o = wgpu_anim(&[
        "bake-vat",
        "--clip",
        "walk",
        "--fps",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("baked clip 1/1 'walk'"), "progress: {stderr}");
    assert!(stdout.contains("| walk | 1.000 | 21 |"), "{stdout}");
    let vat = wgpu_anim::vat::Vat::from_bytes(&std::fs::read(&out).unwrap(), "walk.vat").unwrap();
    assert_eq!((vat.clips.len(), vat.clips[0].frame_count, vat.fps), (1, 21, 20.0));
    let worst = format!("positions within {:.4}", vat.report.max_position_error);
    assert!(stdout.contains(&worst), "the report printed is the file's: {stdout}");
    // A glTF file's clips.
    let o = wgpu_anim(&["bake-vat", "assets/Fox/Fox.gltf", "--clip", "Run"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("| Run |"));
    for (args, says) in [
        (&["bake-vat", "--clip", "nope"][..], "no clip 'nope'"),
        (&["bake-vat", "--fps", "0"][..], "not a finite positive number"),
        (&["bake-vat", "no-such-file.glb"][..], "no-such-file.glb"),
    ] {
        assert_one_line_error(args, says);
    }
}

#[test]
fn time_sampling_reports_both_paths_and_refuses_bad_input() {
    let o = wgpu_anim(&[
        "time-sampling",
        "assets/Fox/Fox.gltf",
        "--characters",
        "20",
        "--frames",
        "3",
    ]);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("timing clip 3/3 'Run'"), "progress: {stderr}");
    for clip in ["Survey", "Walk", "Run"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {clip} | 25 |")))
            .unwrap_or_else(|| panic!("a row for {clip}: {stdout}"));
        let cells: Vec<f64> = row.split('|').map(str::trim).filter_map(|c| c.parse().ok()).collect();
        // joints, duration, mirror ns, sampler ns, ratio, largest difference.
        assert_eq!(cells.len(), 6, "{row}");
        assert!(cells[2] > 0.0 && cells[3] > 0.0, "{row}");
        assert!(cells[5] < 1e-5, "the two paths give the same poses: {row}");
    }
    // Compressed clips and one clip by name.
    let o = wgpu_anim(&[
        "time-sampling",
        "assets/Fox/Fox.gltf",
        "--clip",
        "Walk",
        "--compressed",
        "--frames",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).matches("| Walk |").count(), 1);
    // Keys reduced, at the default tolerance and at one given.
    for extra in [&["--reduce-keys"][..], &["--reduce-keys", "0.01"][..]] {
        let mut args = vec!["time-sampling", "assets/Fox/Fox.gltf", "--clip", "Run", "--frames", "2"];
        args.extend_from_slice(extra);
        let o = wgpu_anim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stdout).matches("| Run |").count(), 1);
    }
    for (args, says) in [
        (
            &["time-sampling", "assets/Fox/Fox.gltf", "--clip", "nope"][..],
            "no animation called 'nope'",
        ),
        (
            &["time-sampling", "assets/Fox/Fox.gltf", "--characters", "0"][..],
            "not a positive",
        ),
        (&["time-sampling", "no-such-file.glb"][..], "no-such-file.glb"),
        (
            &["time-sampling", "assets/Fox/Fox.gltf", "--reduce-keys=-1"][..],
            "not a finite number at least 0",
        ),
    ] {
        assert_one_line_error(args, says);
    }
}

#[test]
fn retarget_writes_the_target_with_the_sources_clips_and_refuses_a_bad_map() {
    let dir = temp_dir("retarget");
    let out = dir.join("cmu_on_mannequin.glb");
    let o = wgpu_anim(&[
        "retarget",
        "assets/cmu/cmu_01_03.glb",
        "--to",
        "mannequin",
        "--feet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains("retarget root pelvis <- Hips")
            && stdout.contains("foot goals on foot_l and foot_r")
            && stdout.contains("clip 'Motion'"),
        "{stdout}"
    );
    let back = wgpu_anim::offline::gltf_import::load(&out).expect("the output imports");
    assert_eq!(
        back.skeletons[0].skeleton.joint_count(),
        wgpu_anim::mannequin::skeleton().joint_count()
    );
    assert_eq!(back.skeletons[0].clips.len(), 1);
    assert_eq!(back.meshes.len(), 1);
    let map = dir.join("map.json");
    std::fs::write(&map, r#"{"LeftArm": "upperarm_r"}"#).unwrap();
    let args = [
        "retarget",
        "mannequin",
        "--to",
        "assets/cmu/cmu_01_03.glb",
        "--map",
        map.to_str().unwrap(),
        "--out",
    ];
    let target = dir.join("x.glb");
    let mut all: Vec<&str> = args.to_vec();
    all.push(target.to_str().unwrap());
    assert_one_line_error(&all, "'LeftArm' and 'RightArm' both map to source joint 'upperarm_r'");
    assert!(!target.exists());
}
