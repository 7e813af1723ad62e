//! `wgpu-anim cost`: instructions per joint-sample of each pass, counted by callgrind.

use crate::CostArgs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use wgpu_anim::bench::cost::{self, CostRow, Section};
use wgpu_anim::bench::{Workload, device_name, utc_date};
use wgpu_anim::offline::compress::ClipFormat;

pub(crate) fn cost(a: &CostArgs) -> Result<(), String> {
    if a.inner {
        return inner(a);
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to run it under valgrind: {e}"))?;
    // Before the device: a missing valgrind is the one line the user sees.
    Command::new(&a.valgrind)
        .arg("--version")
        .output()
        .map_err(|e| no_valgrind(&a.valgrind, &e))?;
    let (device, _) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let device = device_name(&device);
    let date = utc_date(std::time::SystemTime::now());
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
    outln!();
    out!("{}", cost::cost_table(&rows));
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The sections of the one workload and clip format given, in this process, as JSON on stdout.
fn inner(a: &CostArgs) -> Result<(), String> {
    let (&[workload], &[format]) = (a.workloads.as_slice(), a.clip_format.as_slice()) else {
        return Err("--inner takes one workload and one clip format".into());
    };
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let sections =
        cost::run_sections(&device, &queue, a.characters, workload, format, a.repeats).map_err(|e| e.to_string())?;
    outln!("{}", serde_json::to_string(&sections).map_err(|e| e.to_string())?);
    Ok(())
}

/// Runs this program's sections for `workload` and `format` under callgrind and reads its dumps.
fn run_one(a: &CostArgs, exe: &Path, workload: Workload, format: ClipFormat) -> Result<Vec<CostRow>, String> {
    let dir = std::env::temp_dir().join(format!(
        "wgpu-anim-cost-{}-{}-{}",
        std::process::id(),
        workload.name(),
        format.name()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let out_file = dir.join("callgrind.out");
    let output = Command::new(&a.valgrind)
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg("--zero-before=wgpu_anim_cost_begin")
        .arg("--dump-after=wgpu_anim_cost_end")
        .arg(exe)
        .args([
            "cost",
            "--inner",
            "--workloads",
            workload.name(),
            "--clip-format",
            format.name(),
        ])
        .arg(format!("--characters={}", a.characters))
        .arg(format!("--repeats={}", a.repeats))
        .output()
        .map_err(|e| no_valgrind(&a.valgrind, &e))?;
    let rows = read_run(&output, &out_file, workload, format);
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

/// The rows of a finished run under valgrind: its sections from its stdout, their counts from
/// callgrind's dumps `out_file.1`, `out_file.2`, ...
fn read_run(
    output: &std::process::Output,
    out_file: &Path,
    workload: Workload,
    format: ClipFormat,
) -> Result<Vec<CostRow>, String> {
    let what = format!("{} {}", workload.name(), format.name());
    if !output.status.success() {
        // The program's own error line, else valgrind's last word.
        let err = String::from_utf8_lossy(&output.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| l.starts_with("error: ") && !l.contains("XDG_RUNTIME_DIR"))
            .or_else(|| err.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        return Err(format!("{what} under valgrind failed ({}): {last}", output.status));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let sections: Vec<Section> = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("{what}: the run under valgrind printed no sections"))?;
    let dumps = (1..=sections.len())
        .map(|k| PathBuf::from(format!("{}.{k}", out_file.display())))
        .take_while(|p| p.exists())
        .map(|p| cost::dump_instructions(&p))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|e| e.to_string())?;
    cost::rows(workload, format, &sections, &dumps).map_err(|e| e.to_string())
}

/// The error of a valgrind that cannot be run.
fn no_valgrind(valgrind: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot run {}: {e} (install valgrind, on Debian `apt-get install valgrind`, or pass --valgrind PATH)",
        valgrind.display()
    )
}
