//! Instructions the CPU spends on a culled frame, counted by callgrind: does the encode stay flat
//! as the crowd grows? Thread time at these figures (a fraction of a millisecond) moves by half
//! from run to run on a shared machine, and a software adapter running the frame on the same
//! cores leaves the caches cold; an instruction count does neither.
//!
//! `wgpu-anim cost --encode` runs itself under `valgrind --tool=callgrind --separate-threads=yes`.
//! The run under valgrind ([`run_encode_sections`]) makes the `crowd-view` field of each size
//! culled against its camera ([`super::view_of`]), on the staged and on the fused path, plays
//! [`super::cost::WARM_UP_FRAMES`] frames, waits for the device, and then measures one frame:
//! [`crate::Animator::prepare`], [`crate::Animator::encode`] into a new command encoder, its
//! `finish` and [`wgpu::Queue::submit`], between [`super::cost::wgpu_anim_cost_begin`] and
//! [`super::cost::wgpu_anim_cost_end`]. Only the calling thread's count is read (callgrind's
//! thread 1): the adapter's threads, which run the frame, are not the CPU's encode.

use super::culling::{field, view_of};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// One measured frame of a run under valgrind, in the order of callgrind's dumps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncodeSection {
    /// `staged` or `fused`.
    pub path: String,
    /// Characters in the field.
    pub characters: u32,
    /// Pages the field fills.
    pub pages: u32,
    /// Dispatches the frame records.
    pub dispatches: u32,
}

/// One row of the encode table: a section with its instructions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EncodeRow {
    /// The section.
    #[serde(flatten)]
    pub section: EncodeSection,
    /// The calling thread's instructions to prepare, encode and submit the frame.
    pub instructions: u64,
    /// `instructions` over those of the same path's smallest field in the run: the goal is 2 or
    /// less.
    pub ratio: f64,
}

/// Runs one culled frame of the `crowd-view` field of each of `counts` characters, on the staged
/// path for every count and then on the fused one, in this process (under valgrind when counting; module docs), calling the markers
/// around each, and returns the sections in order. A field is dropped before the next is made.
///
/// Errors: a count of 0, the animator's limits, a device error.
pub fn run_encode_sections(device: &wgpu::Device, queue: &wgpu::Queue, counts: &[u32]) -> Result<Vec<EncodeSection>> {
    let mut sections = Vec::new();
    for fused in [false, true] {
        for &n in counts {
            if n == 0 {
                return Err(Error::Limit {
                    what: "an encode section needs at least one character".into(),
                });
            }
            let mut a = field(device, n, Some(view_of(n)), false, None)?;
            a.set_fused(fused)?;
            let wait = || {
                device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| Error::Device(format!("waiting for a crowd-view frame: {e}")))
            };
            for _ in 0..super::cost::WARM_UP_FRAMES {
                super::gpu_frame(device, queue, &mut a)?;
            }
            wait()?;
            super::cost::wgpu_anim_cost_begin();
            a.prepare(queue, super::DT);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder)?;
            queue.submit([encoder.finish()]);
            super::cost::wgpu_anim_cost_end();
            wait()?;
            sections.push(EncodeSection {
                path: if fused { "fused" } else { "staged" }.into(),
                characters: n,
                pages: a.controller().pages_in_use() as u32,
                dispatches: a.dispatches_per_frame(),
            });
        }
    }
    Ok(sections)
}

/// The rows of one run: section `k` with the calling thread's count of dump `k` (`dumps[k]`).
///
/// Errors: as many dumps as sections are needed.
pub fn encode_rows(sections: &[EncodeSection], dumps: &[u64]) -> Result<Vec<EncodeRow>> {
    super::cost::one_dump_each(sections.len(), dumps.len(), "encode sections")?;
    let smallest = |path: &str| {
        sections
            .iter()
            .zip(dumps)
            .filter(|(s, _)| s.path == path)
            .min_by_key(|(s, _)| s.characters)
            .map_or(1, |(_, &d)| d.max(1))
    };
    Ok(sections
        .iter()
        .zip(dumps)
        .map(|(s, &instructions)| EncodeRow {
            section: s.clone(),
            instructions,
            ratio: instructions as f64 / smallest(&s.path) as f64,
        })
        .collect())
}

/// The rows as a Markdown table.
#[must_use]
pub fn encode_table(rows: &[EncodeRow]) -> String {
    let mut out = String::from(
        "| path | characters | pages | dispatches | instructions | ÷ the path's smallest field |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let s = &r.section;
        out += &format!(
            "| {} | {} | {} | {} | {} | {:.2} |\n",
            s.path, s.characters, s.pages, s.dispatches, r.instructions, r.ratio
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_divide_by_the_smallest_field_of_their_path_and_need_a_dump_per_section() {
        let s = |path: &str, characters, pages| EncodeSection {
            path: path.into(),
            characters,
            pages,
            dispatches: 5 * pages,
        };
        let sections = [s("staged", 128_000, 5), s("staged", 1000, 1), s("fused", 1000, 1)];
        let rows = encode_rows(&sections, &[300, 100, 40]).unwrap();
        assert_eq!(rows[0].ratio, 3.0);
        assert_eq!(rows[1].ratio, 1.0);
        assert_eq!(rows[2].ratio, 1.0);
        let table = encode_table(&rows);
        assert!(table.contains("| staged | 128000 | 5 | 25 | 300 | 3.00 |"), "{table}");
        assert!(encode_rows(&sections, &[1, 2]).is_err());
    }
}
