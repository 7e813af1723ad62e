//! Key reduction: the keys of a clip's joint tracks that interpolation from the keys kept around
//! them reproduces within a tolerance, removed — what ozz-animation's animation optimizer,
//! Unity's and Unreal's keyframe reduction do on import. A take exported at a fixed rate keys
//! every joint at every frame, moving or not; the reduced clip plays the same within the
//! tolerance with fewer keys to search, read and store, and a track that does not move at all
//! becomes a single key, which samplers copy instead of interpolating.
//!
//! The tolerance is a distance, as ozz-animation's: how far a key may move the point it animates
//! before it has to stay. A translation's error is the distance between its value and the
//! interpolation of the kept keys; a rotation's, how far it moves a point [`KeyReduction::distance`]
//! from the joint (`2 sin(θ / 2) d` for an angle θ between the two rotations); a scale's, the
//! largest change of a component times that distance. Errors are per joint: a chain of joints
//! can add them up at its end, so a tolerance for an end effector is split over its chain.
//!
//! Linear tracks are reduced by Ramer–Douglas–Peucker's split (the key farthest from the
//! interpolation between a segment's ends kept, each half again), rotations interpolated as the
//! runtime interpolates them ([`crate::math::fast_slerp`]), so the error is measured against what
//! plays; step tracks keep a key only where its value moves beyond the tolerance from the value
//! held before it. Every track keeps its first key, a linear track that moves its last too.
//! Cubic-spline tracks, float curves and morph weights are kept as they are. A track with a key
//! the builder refuses (a time or value not finite, times out of order) is kept whole, for
//! [`crate::LibraryBuilder`] to refuse with its usual error.

use crate::clip::{Clip, Interpolation, Track};
use crate::error::{Error, Result};
use crate::math::fast_slerp;
use glam::{Quat, Vec3, Vec4};

/// How far a removed key may move what it animates ([`reduce_keys`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyReduction {
    /// The largest distance, in metres, a removed key may move the point it animates. 1 mm by
    /// default (ozz-animation's default).
    pub tolerance: f32,
    /// The distance from the joint, in metres, at which a rotation's or a scale's error is
    /// measured: the length of the bone it moves, or the size of what the joint carries. 10 cm
    /// by default (ozz-animation's default).
    pub distance: f32,
}

impl Default for KeyReduction {
    fn default() -> Self {
        Self {
            tolerance: 1e-3,
            distance: 0.1,
        }
    }
}

/// A copy of `clip` without the keys of its linear and step joint tracks that the keys kept
/// around them reproduce within `settings` (module docs): the same clip within the tolerance,
/// with fewer keys.
///
/// # Errors
///
/// [`Error::Limit`] naming the clip when the tolerance is negative or not finite, or the distance
/// is not positive and finite.
///
/// ```
/// use wgpu_anim::offline::key_reduction::{KeyReduction, reduce_keys};
/// let m = wgpu_anim::mannequin::mannequin();
/// let walk = &m.clips[1];
/// let reduced = reduce_keys(walk, &KeyReduction::default())?;
/// let keys = |c: &wgpu_anim::Clip| c.tracks.iter().filter_map(|t| t.rotation.as_ref()).map(|r| r.times.len()).sum::<usize>();
/// assert!(keys(&reduced) < keys(walk));
/// # Ok::<(), wgpu_anim::Error>(())
/// ```
pub fn reduce_keys(clip: &Clip, settings: &KeyReduction) -> Result<Clip> {
    let KeyReduction { tolerance, distance } = *settings;
    if !(tolerance.is_finite() && tolerance >= 0.0 && distance.is_finite() && distance > 0.0) {
        return Err(Error::Limit {
            what: format!(
                "clip '{}': key reduction needs a tolerance of 0 or more and a positive distance, both finite (got {tolerance} and {distance})",
                clip.name
            ),
        });
    }
    let mut out = clip.clone();
    for track in &mut out.tracks {
        if let Some(t) = &mut track.translation {
            reduce(t, tolerance, |a, b| a.distance(b), |a, b, u| a.lerp(b, u));
        }
        if let Some(r) = &mut track.rotation {
            // Both quaternions normalized, as the library stores them: the chord between the two
            // rotations of a point at `distance` is 2 sin(θ / 2) d = 2 √(1 − c²) d, c = |a · b|.
            let chord = |a: Quat, b: Quat| {
                let (a, b) = (a.normalize(), b.normalize());
                let c = f64::from(a.dot(b).abs()).min(1.0);
                (2.0 * (1.0 - c * c).sqrt() * f64::from(distance)) as f32
            };
            let slerp = |a: Quat, b: Quat, u: f32| {
                Quat::from_vec4(fast_slerp(Vec4::from(a.normalize()), Vec4::from(b.normalize()), u))
            };
            reduce(r, tolerance, chord, slerp);
        }
        if let Some(s) = &mut track.scale {
            reduce(
                s,
                tolerance,
                |a: Vec3, b| (a - b).abs().max_element() * distance,
                |a, b, u| a.lerp(b, u),
            );
        }
    }
    Ok(out)
}

/// Removes the keys of `track` that `lerp` of the kept keys reproduces within `tolerance` by
/// `error` (module docs). Cubic splines and tracks of fewer than two keys are left as they are.
fn reduce<T: Copy>(track: &mut Track<T>, tolerance: f32, error: impl Fn(T, T) -> f32, lerp: impl Fn(T, T, f32) -> T) {
    let n = track.times.len();
    if n < 2 || track.values.len() != n || track.interpolation == Interpolation::CubicSpline {
        return;
    }
    // A key stays unless its error is known to be within the tolerance (NaN stays).
    let within = |e: f32| e <= tolerance;
    let (times, values) = (&track.times, &track.values);
    // Keys the builder refuses (a time or value not finite, times out of order) stay, all of them,
    // for its error to name.
    let ordered = times.windows(2).all(|w| w[0] < w[1]);
    if !ordered || times.iter().any(|t| !t.is_finite()) || values.iter().any(|&v| !within(error(v, v))) {
        return;
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    if track.interpolation == Interpolation::Step {
        let mut held = values[0];
        for k in 1..n {
            if !within(error(values[k], held)) {
                keep[k] = true;
                held = values[k];
            }
        }
    } else if (1..n).all(|k| within(error(values[k], values[0]))) {
        // The track does not move: one key.
    } else {
        keep[n - 1] = true;
        let mut segments = vec![(0, n - 1)];
        while let Some((i, j)) = segments.pop() {
            let span = times[j] - times[i];
            let farthest = (i + 1..j)
                .map(|k| {
                    let u = if span > 0.0 { (times[k] - times[i]) / span } else { 0.0 };
                    let e = error(values[k], lerp(values[i], values[j], u));
                    (k, if e.is_nan() { f32::INFINITY } else { e })
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((k, e)) = farthest
                && !within(e)
            {
                keep[k] = true;
                segments.push((i, k));
                segments.push((k, j));
            }
        }
    }
    track.values = kept(&track.values, &keep);
    track.times = kept(&track.times, &keep);
}

/// The elements of `v` whose `keep` is true.
fn kept<X: Copy>(v: &[X], keep: &[bool]) -> Vec<X> {
    v.iter().zip(keep).filter(|&(_, &k)| k).map(|(x, _)| *x).collect()
}
