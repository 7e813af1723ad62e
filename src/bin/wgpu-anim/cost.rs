//! `wgpu-anim cost`: instructions per joint-sample of each pass, counted by callgrind.

use crate::CostArgs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use wgpu_anim::bench::cost::{self, CostRow, Section};
use wgpu_anim::bench::encode_cost::{self, EncodeSection};
use wgpu_anim::bench::{self, Workload, device_name, utc_date};
use wgpu_anim::gpu::CharacterThreads;
use wgpu_anim::offline::compress::ClipFormat;

pub(crate) fn cost(a: &CostArgs) -> Result<(), String> {
    if a.inner {
        return inner(a);
    }
    // Read before anything else: a wrong path fails now, not after minutes of counting.
    if (a.encode || a.transitions) && a.baseline.is_some() {
        return Err("--baseline compares the passes' counts, not --encode's or --transitions'".into());
    }
    let baseline = a.baseline.as_deref().map(read_baseline).transpose()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to run it under valgrind: {e}"))?;
    // Before the device: a missing valgrind is the one line the user sees.
    Command::new(&a.valgrind)
        .arg("--version")
        .output()
        .map_err(|e| no_valgrind(&a.valgrind, &e))?;
    let (device, _) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let device = device_name(&device);
    let date = utc_date(std::time::SystemTime::now());
    if a.encode {
        return encode(a, &exe, &device, &date);
    }
    if a.transitions {
        return transitions(a, &exe, &device, &date);
    }
    let mut rows = Vec::new();
    for &format in &a.clip_format {
        for &workload in &a.workloads {
            eprintln!(
                "{} {}, {} characters, under callgrind (minutes) ...",
                workload.name(),
                format.name(),
                a.characters
            );
            let start = Instant::now();
            rows.extend(run_one(a, &exe, workload, format)?);
            eprintln!("  done in {:.0} s", start.elapsed().as_secs_f64());
        }
    }
    outln!(
        "Instructions per run of each pass, counted by callgrind; {} characters, each pass run {} times per section; device: {device}; {date}",
        a.characters,
        a.repeats
    );
    if rows.iter().any(|r| r.pass.contains(", ")) {
        outln!(
            "`gpu <pass>` is the adapter's own way of running a character (on a CPU adapter a thread per character, which no GPU runs); `gpu <pass>, narrow` a SIMD group per character, nearer to a GPU's way."
        );
    }
    outln!();
    out!("{}", cost::cost_table(&rows));
    if let (Some(baseline), Some(path)) = (&baseline, &a.baseline) {
        outln!();
        outln!("Against the baseline {}:", path.display());
        outln!();
        out!("{}", cost::comparison_table(&rows, baseline));
    }
    write_json(a, &rows)
}

/// The rows of a baseline run (`wgpu-anim cost --json`).
fn read_baseline(path: &Path) -> Result<Vec<CostRow>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the baseline: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not the rows of `wgpu-anim cost --json`: {e}", path.display()))
}

/// `--encode`: the CPU's encode of a culled frame at each field size, staged and fused, in one run
/// under callgrind.
fn encode(a: &CostArgs, exe: &Path, device: &str, date: &str) -> Result<(), String> {
    let sizes = a
        .view_characters
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    eprintln!("crowd-view, culled, {sizes} characters, staged and fused, under callgrind (minutes) ...");
    let start = Instant::now();
    let args = ["--encode".to_owned(), format!("--view-characters={sizes}")];
    let (output, out_file, dir) = under_callgrind(a, exe, "encode", &args, true)?;
    let rows = (|| {
        let sections: Vec<EncodeSection> = sections_of(&output, "crowd-view encode")?;
        // Thread 1, the one that prepared, encoded and submitted.
        let dumps = dumps_of(&out_file, sections.len(), "-01", cost::DumpCount::Summary)?;
        encode_cost::encode_rows(&sections, &dumps).map_err(|e| e.to_string())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    let rows = rows?;
    eprintln!("  done in {:.0} s", start.elapsed().as_secs_f64());
    outln!(
        "Instructions of the calling thread to prepare, encode and submit one culled crowd-view frame, counted by callgrind; device: {device}; {date}"
    );
    outln!();
    out!("{}", encode_cost::encode_table(&rows));
    write_json(a, &rows)
}

/// `--transitions`: the `sample` pass of a quiet, a cross-fading and an inertializing crowd, in one
/// run under callgrind.
fn transitions(a: &CostArgs, exe: &Path, device: &str, date: &str) -> Result<(), String> {
    eprintln!(
        "transitions, 3 crowds of {} characters, {} frames each, under callgrind (minutes) ...",
        a.characters,
        bench::COUNTED_FRAMES
    );
    let start = Instant::now();
    let args = ["--transitions".to_owned(), format!("--characters={}", a.characters)];
    let (output, out_file, dir) = under_callgrind(a, exe, "transitions", &args, false)?;
    let cost = (|| {
        let sections: bench::TransitionSections = sections_of(&output, "transitions")?;
        let dumps = dumps_of(&out_file, sections.count(), "", cost::DumpCount::Totals)?;
        bench::transition_cost(&sections, &dumps).map_err(|e| e.to_string())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    let cost = cost?;
    eprintln!("  done in {:.0} s", start.elapsed().as_secs_f64());
    outln!(
        "Instructions of the `sample` pass, counted by callgrind: crowds of {} locomotion-2d characters (compressed clips), {} of them transitioning, mean of {} frames; a transitioning character's share is the quiet crowd's per character plus the crowd's extra over the transitioning ones; device: {device}; {date}",
        cost.characters,
        cost.transitioning,
        cost.frames
    );
    outln!();
    out!("{}", bench::transition_cost_table(&cost));
    write_json(a, std::slice::from_ref(&cost))
}

/// The sections of the one workload and clip format given (with `--encode`, of the encode), in
/// this process, as JSON on stdout.
fn inner(a: &CostArgs) -> Result<(), String> {
    if a.encode {
        let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
        let sections =
            encode_cost::run_encode_sections(&device, &queue, &a.view_characters).map_err(|e| e.to_string())?;
        outln!("{}", serde_json::to_string(&sections).map_err(|e| e.to_string())?);
        return Ok(());
    }
    if a.transitions {
        let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
        let sections = bench::run_transition_sections(&device, &queue, a.characters, bench::COUNTED_FRAMES)
            .map_err(|e| e.to_string())?;
        outln!("{}", serde_json::to_string(&sections).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let (&[workload], &[format]) = (a.workloads.as_slice(), a.clip_format.as_slice()) else {
        return Err("--inner takes one workload and one clip format".into());
    };
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let sections = cost::run_sections(
        &device,
        &queue,
        a.characters,
        workload,
        format,
        a.repeats,
        &also(a, &device),
    )
    .map_err(|e| e.to_string())?;
    outln!("{}", serde_json::to_string(&sections).map_err(|e| e.to_string())?);
    Ok(())
}

/// The ways of running a character counted besides the adapter's default: --character-threads,
/// else a SIMD group per character on a CPU adapter (whose default, a thread per character, no
/// GPU runs) and none on a GPU.
fn also(a: &CostArgs, device: &wgpu::Device) -> Vec<CharacterThreads> {
    a.character_threads.clone().unwrap_or_else(|| {
        if bench::is_cpu_adapter(device) {
            vec![CharacterThreads::Narrow]
        } else {
            Vec::new()
        }
    })
}

/// Runs this program's sections for `workload` and `format` under callgrind and reads its dumps.
fn run_one(a: &CostArgs, exe: &Path, workload: Workload, format: ClipFormat) -> Result<Vec<CostRow>, String> {
    let what = format!("{} {}", workload.name(), format.name());
    let mut args = vec![
        "--workloads".to_owned(),
        workload.name().to_owned(),
        "--clip-format".to_owned(),
        format.name().to_owned(),
        format!("--characters={}", a.characters),
        format!("--repeats={}", a.repeats),
    ];
    if let Some(threads) = &a.character_threads {
        let names: Vec<_> = threads.iter().map(|t| t.name()).collect();
        args.push(format!("--character-threads={}", names.join(",")));
    }
    let (output, out_file, dir) = under_callgrind(a, exe, &what.replace(' ', "-"), &args, false)?;
    let rows = (|| {
        let sections: Vec<Section> = sections_of(&output, &what)?;
        let dumps = dumps_of(&out_file, sections.len(), "", cost::DumpCount::Totals)?;
        cost::rows(workload, format, &sections, &dumps).map_err(|e| e.to_string())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

/// Runs `cost --inner ARGS` of this program under callgrind, its counters zeroed on entering
/// the begin marker and dumped on leaving the end marker (one file per thread with
/// `separate_threads`); returns its output, callgrind's output file and the directory to remove.
fn under_callgrind(
    a: &CostArgs,
    exe: &Path,
    tag: &str,
    args: &[String],
    separate_threads: bool,
) -> Result<(std::process::Output, PathBuf, PathBuf), String> {
    let dir = std::env::temp_dir().join(format!("wgpu-anim-cost-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let out_file = dir.join("callgrind.out");
    let output = Command::new(&a.valgrind)
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg("--zero-before=wgpu_anim_cost_begin")
        .arg("--dump-after=wgpu_anim_cost_end")
        .arg(format!(
            "--separate-threads={}",
            if separate_threads { "yes" } else { "no" }
        ))
        .arg(exe)
        .args(["cost", "--inner"])
        .args(args)
        .output()
        .map_err(|e| no_valgrind(&a.valgrind, &e))?;
    if !output.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        // The program's own error line, else valgrind's last word.
        let err = String::from_utf8_lossy(&output.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| l.starts_with("error: ") && !l.contains("XDG_RUNTIME_DIR"))
            .or_else(|| err.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        return Err(format!("{tag} under valgrind failed ({}): {last}", output.status));
    }
    Ok((output, out_file, dir))
}

/// The sections a finished run under valgrind printed: the last JSON line of its stdout.
fn sections_of<T: serde::de::DeserializeOwned>(output: &std::process::Output, what: &str) -> Result<T, String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("{what}: the run under valgrind printed no sections"))
}

/// The counts of callgrind's dumps `out_file.1SUFFIX`, `out_file.2SUFFIX`, ... up to `sections`
/// (fewer where fewer were written), each from its `which` line.
fn dumps_of(out_file: &Path, sections: usize, suffix: &str, which: cost::DumpCount) -> Result<Vec<u64>, String> {
    (1..=sections)
        .map(|k| PathBuf::from(format!("{}.{k}{suffix}", out_file.display())))
        .take_while(|p| p.exists())
        .map(|p| cost::dump_instructions(&p, which))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|e| e.to_string())
}

/// Writes `rows` as a JSON array to `--json PATH`, when given.
fn write_json<T: serde::Serialize>(a: &CostArgs, rows: &[T]) -> Result<(), String> {
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(rows).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The error of a valgrind that cannot be run.
fn no_valgrind(valgrind: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot run {}: {e} (install valgrind, on Debian `apt-get install valgrind`, or pass --valgrind PATH)",
        valgrind.display()
    )
}
