//! `wgpu-anim bench`: one animation frame of crowds of mannequins timed, GPU and CPU.

use crate::BenchArgs;
use std::path::Path;
use wgpu_anim::bench::{self, Config, Report};

/// The bench's configuration from the command line: [`Config::quick`], [`Config::report`] (with
/// --report) or [`Config::default`] under the options given.
pub(crate) fn config_of(a: &BenchArgs) -> Config {
    let base = match (a.quick, &a.report) {
        (true, _) => Config::quick(),
        (false, Some(_)) => Config::report(),
        (false, None) => Config::default(),
    };
    Config {
        counts: a.characters.clone().unwrap_or(base.counts),
        frames: a.frames.unwrap_or(base.frames),
        warmup: base.warmup,
        workloads: a.workloads.clone(),
        clip_formats: a.clip_format.clone(),
        paths: a.paths.clone(),
        threads: a.threads,
        skinning: !a.no_skinning,
        morph: !a.no_morph,
        transitions: !a.no_transitions,
        view_counts: a
            .view_characters
            .clone()
            .unwrap_or(base.view_counts)
            .into_iter()
            .filter(|&n| n > 0)
            .collect(),
        character_threads: a.character_threads.clone(),
        extras_at_every_count: a.extras_at_every_count || base.extras_at_every_count,
    }
}

pub(crate) fn run_bench(a: &BenchArgs) -> Result<(), String> {
    let config = config_of(a);
    if let Some(dir) = &a.report {
        // Before minutes of measuring: a directory that cannot be written fails now.
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    }
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let report = bench::run(&device, &queue, &config, &mut |line| eprintln!("{line}")).map_err(|e| e.to_string())?;
    let text = bench::markdown_report(&report);
    out!("{text}");
    let failures = report.failures().len();
    if failures > 0 {
        eprintln!("{failures} rows failed their checks: see the end of the report");
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report.rows).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.plot {
        save_plot(path, &report)?;
    }
    if let Some(dir) = &a.report {
        write_report(dir, &report, &text)?;
    }
    Ok(())
}

fn save_plot(path: &Path, report: &Report) -> Result<(), String> {
    let title = format!("One animation frame — {}", report.device);
    bench::plot::save(path, &report.rows, &title).map_err(|e| e.to_string())?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `--report DIR`: `DIR/<date>-bench-report.md` (what ran where, then the tables), the report as
/// JSON and the plot beside it.
fn write_report(dir: &Path, report: &Report, tables: &str) -> Result<(), String> {
    // 2026-12-06T09:13:40Z → 2026-12-06-0913 (`bench::utc_date`'s form; anything else as it is).
    let stamp = match (report.date.get(..10), report.date.get(11..16)) {
        (Some(day), Some(time)) => format!("{day}-{}", time.replace(':', "")),
        _ => report.date.replace([':', ' '], "-"),
    };
    let stem = format!("{stamp}-bench-report");
    let (md, json, png) = (
        dir.join(format!("{stem}.md")),
        dir.join(format!("{stem}.json")),
        dir.join(format!("{stem}.png")),
    );
    save_plot(&png, report)?;
    let command: Vec<String> = std::env::args().skip(1).collect();
    let text = format!(
        "# The frame benchmark, {date}\n\n\
         - Date (UTC): {date}\n\
         - Device: {device}\n\
         - Driver: {driver}\n\
         - Commit: {commit}\n\
         - Command: `wgpu-anim {command}`\n\
         - Checks: {checks}\n\
         - Figures: [{json}]({json}), plot: [{png}]({png})\n\n\
         ![frame time against characters]({png})\n\n{tables}",
        date = report.date,
        device = report.device,
        driver = if report.driver.is_empty() {
            "(not reported)"
        } else {
            &report.driver
        },
        commit = commit(),
        command = command.join(" "),
        checks = match report.failures().len() {
            0 => "every table passed".to_owned(),
            n => format!("{n} rows FAILED (listed at the end)"),
        },
        json = file_name(&json),
        png = file_name(&png),
    );
    let write = |path: &Path, contents: String| {
        std::fs::write(path, contents).map_err(|e| format!("{}: cannot write: {e}", path.display()))
    };
    write(
        &json,
        serde_json::to_string_pretty(report).map_err(|e| e.to_string())? + "\n",
    )?;
    write(&md, text)?;
    eprintln!("wrote {}", md.display());
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The commit the program runs from, as `git` sees the current directory (with `+ changes` where
/// the tree differs from it), or why it is not known.
fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short=8", "HEAD"]) {
        Some(hash) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{hash} + changes"),
            _ => hash,
        },
        None => "unknown (not run in a git checkout)".into(),
    }
}
