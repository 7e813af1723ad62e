//! Instructions per joint-sample of each pass, counted by callgrind: a cost figure that does not
//! drift with whatever else the machine is doing, so two builds compare exactly where timings on a
//! shared machine differ by ±15 % from run to run.
//!
//! `wgpu-anim cost` runs itself under `valgrind --tool=callgrind` once per workload and clip
//! format. The run under valgrind ([`run_sections`]) builds the bench's crowd, plays three
//! frames, and then measures one section per pass:
//!
//! - each GPU pass on its own ([`crate::Animator::encode_stage`]) recorded `repeats` times into one
//!   command buffer, submitted and waited for: the instructions of wgpu and the driver recording
//!   and submitting it, and of a software adapter (lavapipe) running the shader, every thread's;
//! - each stage of the CPU mirror on one thread, `repeats` times.
//!
//! A section starts with a call to [`wgpu_anim_cost_begin`] and ends with one to
//! [`wgpu_anim_cost_end`]; callgrind is told to zero its counters on entering the first
//! (`--zero-before`) and to write them out on leaving the second (`--dump-after`), so its `k`-th
//! dump holds section `k`'s instructions and nothing else: not the start-up, not the shader
//! compilation, not the warm-up frames. Outside valgrind the two calls do nothing.
//!
//! A joint-sample is one joint of one character evaluated once (a character of 53 joints is 53
//! joint-samples per frame, whatever its blend tree samples): the per-character clock pass is
//! divided by the same count, so a row of each pass adds up to the frame. Counts are of
//! instructions as the host executes them: a software adapter's vector instructions count one
//! each, so a figure is for comparing builds, passes and paths on one machine, not a prediction of
//! a GPU's time.

use super::{Workload, crowd, gpu_frame};
use crate::error::{Error, Result};
use crate::gpu::CharacterThreads;
use crate::offline::compress::ClipFormat;
use crate::shaders::Stage;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Frames played before the sections, as the bench warms up.
pub const WARM_UP_FRAMES: u32 = 3;

/// Marks the start of a measured section: callgrind's `--zero-before` names it. Does nothing.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn wgpu_anim_cost_begin() {
    // Distinct bodies, so that no linker folds the two markers into one symbol.
    std::hint::black_box(0x5EC7_1011_u32);
}

/// Marks the end of a measured section: callgrind's `--dump-after` names it. Does nothing.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn wgpu_anim_cost_end() {
    std::hint::black_box(0x5EC7_E2D0_u32);
}

/// One measured section of a run under valgrind, in the order of callgrind's dumps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// `gpu <stage>` or `cpu <stage>` (`gpu fused` for the fused pass).
    pub name: String,
    /// How many times the section ran the pass.
    pub repeats: u32,
    /// Characters in the crowd.
    pub characters: u32,
    /// Joint-samples per run of the pass: the crowd's joints.
    pub joint_samples: u64,
}

/// One row of the cost table: a pass of a workload and clip format, with its instructions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    /// The workload's name.
    pub workload: String,
    /// `raw` or `compressed`.
    pub clips: String,
    /// The section: `gpu sample`, `cpu sample`, ...
    pub pass: String,
    /// Characters in the crowd.
    pub characters: u32,
    /// Instructions per run of the pass (the section's count over its repeats).
    pub instructions: u64,
    /// Instructions per joint-sample.
    pub per_joint_sample: f64,
}

/// Runs the sections of one workload and clip format in this process (under valgrind when
/// counting; see the module docs), calling the markers around each, and returns them in order.
/// Each of `also` that is not the crowd's own way of running a character
/// ([`crate::Animator::character_threads`]) counts the GPU passes again on the crowd run that way,
/// as sections named `gpu <stage>, <threads>` ([`CharacterThreads::name`]).
///
/// Errors: the animator's limits, a device error, `repeats` or `characters` of 0.
pub fn run_sections(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    characters: u32,
    workload: Workload,
    format: ClipFormat,
    repeats: u32,
    also: &[CharacterThreads],
) -> Result<Vec<Section>> {
    if characters == 0 || repeats == 0 {
        return Err(Error::Limit {
            what: "cost sections need at least one character and one repeat".into(),
        });
    }
    let mut a = crowd(device, queue, characters, workload, format)?;
    for _ in 0..WARM_UP_FRAMES {
        gpu_frame(device, queue, &mut a)?;
    }
    let joint_samples: u64 = (0..a.controller().pages_in_use())
        .flat_map(|p| {
            a.controller()
                .page_instances(p)
                .iter()
                .map(|i| u64::from(i.joint_count))
        })
        .sum();
    let section = |name: String| Section {
        name,
        repeats,
        characters,
        joint_samples,
    };
    let mut sections = Vec::new();
    count_gpu_stages(device, queue, &a, repeats, "", &mut |name| sections.push(section(name)))?;
    // The same crowd run another way (a SIMD group per character where the adapter's default is
    // a thread per character): its passes' sections are named `gpu <stage>, <threads>`.
    for &threads in also.iter().filter(|&&t| t != a.character_threads()) {
        let mut other = super::crowd_threads(device, queue, characters, workload, format, threads)?;
        for _ in 0..WARM_UP_FRAMES {
            gpu_frame(device, queue, &mut other)?;
        }
        let suffix = format!(", {}", other.character_threads().name());
        count_gpu_stages(device, queue, &other, repeats, &suffix, &mut |name| {
            sections.push(section(name));
        })?;
    }
    let lib = a.controller().library().clone();
    let mut mirror = super::CpuCrowd::from_gpu(device, queue, &a, 1)?;
    for stage in Stage::COMPUTE {
        wgpu_anim_cost_begin();
        for _ in 0..repeats {
            mirror.run_stage(&lib, stage);
        }
        wgpu_anim_cost_end();
        sections.push(section(format!("cpu {}", stage.name())));
    }
    Ok(sections)
}

/// Counts each GPU pass of `a` (and the fused one where it has it) as a section of its own,
/// named `gpu <stage><suffix>` through `push`.
fn count_gpu_stages(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &crate::Animator,
    repeats: u32,
    suffix: &str,
    push: &mut dyn FnMut(String),
) -> Result<()> {
    let mut gpu_stages = a.passes();
    gpu_stages.retain(|&s| s != Stage::Cull);
    if a.fused_available() && !gpu_stages.contains(&Stage::Fused) {
        gpu_stages.push(Stage::Fused);
    }
    for stage in gpu_stages {
        // Once unmeasured first: a driver may compile a pipeline on its first dispatch (lavapipe
        // does), and the fused pass has not run in the warm-up frames.
        run_gpu_stage(device, queue, a, stage, 1)?;
        // Recording is part of what is counted: the CPU's share of a pass.
        wgpu_anim_cost_begin();
        run_gpu_stage(device, queue, a, stage, repeats)?;
        wgpu_anim_cost_end();
        push(format!("gpu {}{suffix}", stage.name()));
    }
    Ok(())
}

/// Records `stage`'s pass `repeats` times into one command buffer, submits it and waits for it.
pub(super) fn run_gpu_stage(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &crate::Animator,
    stage: Stage,
    repeats: u32,
) -> Result<()> {
    let mut encoder = device.create_command_encoder(&Default::default());
    for _ in 0..repeats {
        a.encode_stage(&mut encoder, stage)?;
    }
    queue.submit([encoder.finish()]);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(format!("waiting for the {} pass: {e}", stage.name())))?;
    Ok(())
}

/// Which line of a callgrind dump holds a section's count. The two differ, measured with
/// callgrind 3.19 on this command's runs: in a dump of every thread (`--separate-threads=no`)
/// `summary:` counts from the previous dump (the unmeasured work between two sections too) and
/// `totals:`, the sum of the cost lines written, from the zeroing marker; in one thread's dump
/// (`--separate-threads=yes`) `summary:` counts that thread from the zeroing marker, and the
/// `totals:` of a dump that follows unmeasured work can carry cost from before the marker
/// (reproduced: a frame measured three times in a row gave one `summary:` all three times, and a
/// `totals:` 2.3 times as large the first time only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpCount {
    /// `totals:`: for a dump of every thread.
    Totals,
    /// `summary:`: for one thread's dump.
    Summary,
}

/// The instruction count of one callgrind dump file, from its `which` line.
///
/// Errors: the file cannot be read, or has no count.
pub fn dump_instructions(path: &Path, which: DumpCount) -> Result<u64> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Limit {
        what: format!("{}: cannot read the callgrind dump: {e}", path.display()),
    })?;
    parse_dump_instructions(&text, which).ok_or_else(|| Error::Limit {
        what: format!("{}: no {which:?} line with a count", path.display()),
    })
}

/// The count of the first event on a callgrind dump's `which` line.
#[must_use]
pub fn parse_dump_instructions(text: &str, which: DumpCount) -> Option<u64> {
    let key = match which {
        DumpCount::Totals => "totals:",
        DumpCount::Summary => "summary:",
    };
    let line = text.lines().find(|l| l.starts_with(key))?;
    line.split_once(':')?.1.split_whitespace().next()?.parse().ok()
}

/// A dump for each of `sections` sections (`what` names them), else an error that asks whether
/// callgrind found the markers: a run whose markers were not seen dumps nothing.
pub(super) fn one_dump_each(sections: usize, dumps: usize, what: &str) -> Result<()> {
    if dumps == sections {
        return Ok(());
    }
    Err(Error::Limit {
        what: format!("callgrind wrote {dumps} dumps for {sections} {what}: were the markers' symbols found?"),
    })
}

/// The rows of one run: section `k` with the count of dump `k` (`dumps[k]`).
///
/// Errors: as many dumps as sections are needed.
pub fn rows(workload: Workload, format: ClipFormat, sections: &[Section], dumps: &[u64]) -> Result<Vec<CostRow>> {
    one_dump_each(sections.len(), dumps.len(), "sections")?;
    Ok(sections
        .iter()
        .zip(dumps)
        .map(|(s, &count)| {
            let instructions = count / u64::from(s.repeats.max(1));
            CostRow {
                workload: workload.name().into(),
                clips: format.name().into(),
                pass: s.name.clone(),
                characters: s.characters,
                instructions,
                per_joint_sample: instructions as f64 / s.joint_samples.max(1) as f64,
            }
        })
        .collect())
}

/// The rows as a Markdown table: instructions per frame's run of each pass and per joint-sample,
/// and the GPU pass against the CPU mirror's stage where both are there.
#[must_use]
pub fn cost_table(rows: &[CostRow]) -> String {
    let mut out = String::from(
        "| workload | clips | pass | characters | instructions per run | per joint-sample | GPU ÷ CPU mirror |\n\
         |---|---|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let ratio = r
            .pass
            .strip_prefix("gpu ")
            .map(|stage| stage.split(',').next().unwrap_or(stage))
            .and_then(|stage| {
                rows.iter().find(|c| {
                    c.workload == r.workload && c.clips == r.clips && c.pass.strip_prefix("cpu ") == Some(stage)
                })
            })
            .map_or(String::new(), |c| {
                format!("{:.2}", r.per_joint_sample / c.per_joint_sample.max(1e-9))
            });
        out += &format!(
            "| {} | {} | {} | {} | {} | {:.0} | {} |\n",
            r.workload, r.clips, r.pass, r.characters, r.instructions, r.per_joint_sample, ratio
        );
    }
    out
}

/// The rows against a `baseline` run's (another build's `wgpu-anim cost --json`) as a Markdown
/// table: each pass's instructions per joint-sample in both and this run's ÷ the baseline's,
/// matched by workload, clip format, pass and character count ("–" where the baseline has no
/// such row). Two runs of one build count within a fraction of a percent of each other (timings
/// move by ±15 %), so a ratio a percent or more from 1 is the builds' difference.
#[must_use]
pub fn comparison_table(rows: &[CostRow], baseline: &[CostRow]) -> String {
    let mut out = String::from(
        "| workload | clips | pass | characters | baseline per joint-sample | per joint-sample | ÷ baseline |\n\
         |---|---|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let before = baseline.iter().find(|b| {
            b.workload == r.workload && b.clips == r.clips && b.pass == r.pass && b.characters == r.characters
        });
        let (before, ratio) = before.map_or(("–".into(), "–".into()), |b| {
            (
                format!("{:.0}", b.per_joint_sample),
                format!("{:.3}", r.per_joint_sample / b.per_joint_sample.max(1e-9)),
            )
        });
        out += &format!(
            "| {} | {} | {} | {} | {before} | {:.0} | {ratio} |\n",
            r.workload, r.clips, r.pass, r.characters, r.per_joint_sample
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_gives_its_totals() {
        let text = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 12\nfl=(1) x\n0 5\ntotals: 1234567\n";
        assert_eq!(parse_dump_instructions(text, DumpCount::Totals), Some(1_234_567));
        assert_eq!(parse_dump_instructions(text, DumpCount::Summary), Some(12));
        assert_eq!(
            parse_dump_instructions("events: Ir\nsummary: 99 3\n", DumpCount::Summary),
            Some(99)
        );
        assert_eq!(
            parse_dump_instructions("events: Ir\nsummary: 99 3\n", DumpCount::Totals),
            None
        );
        assert_eq!(parse_dump_instructions("events: Ir\n", DumpCount::Summary), None);
        assert_eq!(parse_dump_instructions("totals: many\n", DumpCount::Totals), None);
    }

    #[test]
    fn rows_divide_by_repeats_and_joint_samples_and_need_a_dump_per_section() {
        let s = |name: &str| Section {
            name: name.into(),
            repeats: 2,
            characters: 10,
            joint_samples: 500,
        };
        let sections = [s("gpu sample"), s("cpu sample")];
        let r = rows(
            Workload::SingleClip,
            ClipFormat::Raw,
            &sections,
            &[4_000_000, 1_000_000],
        )
        .unwrap();
        assert_eq!(r[0].instructions, 2_000_000);
        assert_eq!(r[0].per_joint_sample, 4000.0);
        assert_eq!(r[1].per_joint_sample, 1000.0);
        let table = cost_table(&r);
        assert!(
            table.contains("| single-clip | raw | gpu sample | 10 | 2000000 | 4000 | 4.00 |"),
            "{table}"
        );
        assert!(rows(Workload::SingleClip, ClipFormat::Raw, &sections, &[1]).is_err());
    }

    #[test]
    fn a_comparison_divides_by_the_matching_baseline_row() {
        let row = |pass: &str, clips: &str, per_joint_sample: f64| CostRow {
            workload: "single-clip".into(),
            clips: clips.into(),
            pass: pass.into(),
            characters: 250,
            instructions: 0,
            per_joint_sample,
        };
        let baseline = [
            row("gpu sample", "raw", 2000.0),
            row("gpu sample", "compressed", 4000.0),
        ];
        let rows = [row("gpu sample", "raw", 1500.0), row("gpu fused", "raw", 900.0)];
        let table = comparison_table(&rows, &baseline);
        assert!(
            table.contains("| single-clip | raw | gpu sample | 250 | 2000 | 1500 | 0.750 |"),
            "{table}"
        );
        assert!(
            table.contains("| single-clip | raw | gpu fused | 250 | – | 900 | – |"),
            "{table}"
        );
        // Another crowd size is another figure, not a baseline.
        let mut other = baseline[0].clone();
        other.characters = 1000;
        assert!(comparison_table(&rows[..1], &[other]).contains("| – | 1500 | – |"));
    }
}
