//! The checks a compressed clip's blob passes before the library takes it. (Its f64 decode, the
//! accuracy oracle of the GPU's, is the offline half's: [`crate::offline::decompress`].)

use super::CompressedClip;
use super::format::Blob;

/// Checks a compressed clip's blob and packed channels on their own (the builder checks them
/// against the skeleton): the blob well formed, one blob track per packed channel, no channel
/// packed twice, frames that span the clip's duration.
///
/// Errors: what is wrong.
pub fn check_blob(clip: &CompressedClip) -> std::result::Result<(), String> {
    if clip.packed.is_empty() {
        if !clip.blob.is_empty() {
            return Err(format!("a blob of {} words but no packed channel", clip.blob.len()));
        }
        return Ok(());
    }
    let blob = Blob::parse(&clip.blob).map_err(|e| format!("packed tracks: {e}"))?;
    let h = blob.header();
    if h.tracks as usize != clip.packed.len() {
        return Err(format!(
            "{} packed channels but {} tracks in the blob",
            clip.packed.len(),
            h.tracks
        ));
    }
    for (k, p) in clip.packed.iter().enumerate() {
        if clip.packed[..k].contains(p) {
            return Err(format!("joint {} {} is packed twice", p.joint, p.channel));
        }
    }
    let span = (f64::from(h.frame_count) - 1.0) / f64::from(h.rate);
    let duration = f64::from(clip.clip.duration);
    if (span - duration).abs() > 1e-3 * duration.max(1e-3) {
        return Err(format!(
            "{} frames at {} Hz span {span} s, not the clip's {duration} s",
            h.frame_count, h.rate
        ));
    }
    Ok(())
}
