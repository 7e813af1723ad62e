//! Morph-weight tracks out. glTF keys all of a mesh's weights together, in one `weights` channel
//! on the mesh's node with as many values per key as the mesh has targets, where a clip keeps a
//! track per target, each with its own keys.

use crate::clip::{Clip, Interpolation, Track};
use crate::reference::sample_scalar;

/// The keys of the `weights` channel of a mesh of `targets` morph targets (default weights
/// `defaults`) playing `clip`: its interpolation, times, and `targets` values per time, a target
/// the clip does not drive holding its default weight. The times are every driven track's keys;
/// where the tracks share linear or step keys that is exact, else (cubic splines, or linear and
/// step mixed) each span is cut in four and keyed linearly. `None` when the clip drives no target,
/// or one past the mesh's.
pub(super) fn weights_keys(
    clip: &Clip,
    targets: usize,
    defaults: &[f32],
) -> Option<(Interpolation, Vec<f32>, Vec<f32>)> {
    let needed = clip.morph_weights.iter().rposition(|t| !t.times.is_empty())? + 1;
    if needed > targets {
        return None;
    }
    let driven: Vec<&Track<f32>> = clip.morph_weights.iter().filter(|t| !t.times.is_empty()).collect();
    let first = driven[0].interpolation;
    let exact = first != Interpolation::CubicSpline && driven.iter().all(|t| t.interpolation == first);
    let mut keys: Vec<f32> = driven.iter().flat_map(|t| t.times.iter().copied()).collect();
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    let times: Vec<f32> = if exact {
        keys
    } else {
        let mut cut = Vec::with_capacity(4 * keys.len());
        for pair in keys.windows(2) {
            cut.extend((0..4).map(|k| pair[0] + (pair[1] - pair[0]) * k as f32 / 4.0));
        }
        cut.extend(keys.last());
        cut
    };
    let values = times
        .iter()
        .flat_map(|&t| {
            (0..targets).map(
                move |k| match clip.morph_weights.get(k).filter(|w| !w.times.is_empty()) {
                    Some(track) => sample_scalar(track, f64::from(t)) as f32,
                    None => defaults.get(k).copied().unwrap_or(0.0),
                },
            )
        })
        .collect();
    Some((if exact { first } else { Interpolation::Linear }, times, values))
}
