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
        "Instructions per run of each pass, counted by callgrind; {} characters, {} runs per section; device: {device}; {date}",
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
        .map_err(|e| {
            format!(
                "cannot run {}: {e} (install valgrind, on Debian `apt-get install valgrind`, or pass --valgrind PATH)",
                a.valgrind.display()
            )
        })?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!(
            "{} {} under valgrind failed ({}): {last}",
            workload.name(),
            format.name(),
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let sections: Vec<Section> = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            format!(
                "{} {}: the run under valgrind printed no sections",
                workload.name(),
                format.name()
            )
        })?;
    let dumps = (1..=sections.len())
        .map(|k| PathBuf::from(format!("{}.{k}", out_file.display())))
        .take_while(|p| p.exists())
        .map(|p| cost::dump_instructions(&p))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|e| e.to_string())?;
    let rows = cost::rows(workload, format, &sections, &dumps).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rows)
}
