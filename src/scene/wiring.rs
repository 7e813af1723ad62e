//! The character's prop and footprints wired to a crowd's animator.

use super::character::Character;
use crate::error::Result;
use crate::gpu::{Animator, FootprintRenderer, Footprints, PropRenderer};

/// Marks in a crowd's footprint ring: about six seconds of a crowd's steps (two a second per
/// member), within 4,096 and 65,536.
fn footprint_capacity(count: usize) -> u32 {
    (count * 12).clamp(4096, 65_536) as u32
}

/// Footprints of `character`'s members and their renderer, when it has foot-down events and
/// sole sockets; the animator then watches events (a log of a record per two members, at least
/// 4,096).
pub(super) async fn footprints(
    device: &wgpu::Device,
    animator: &mut Animator,
    character: &Character,
    count: usize,
    color_format: wgpu::TextureFormat,
    depth_format: Option<wgpu::TextureFormat>,
    sample_count: u32,
) -> Result<Option<(Footprints, FootprintRenderer)>> {
    let Some(spec) = &character.footprints else {
        return Ok(None);
    };
    if animator.event_capacity() == 0 {
        animator.watch_events(device, (count as u32 / 2).max(4096))?;
    }
    let capacity = footprint_capacity(count);
    let marks = Footprints::new_async(device, animator, spec.events, spec.sockets, capacity).await?;
    let renderer = marks
        .renderer_async(device, color_format, depth_format, sample_count)
        .await?;
    Ok(Some((marks, renderer)))
}

/// The prop renderer of `character`'s prop held by members 1, 1 + every, ... below `count`.
pub(super) async fn prop_renderer(
    device: &wgpu::Device,
    animator: &Animator,
    character: &Character,
    count: usize,
    color_format: wgpu::TextureFormat,
    depth_format: Option<wgpu::TextureFormat>,
    sample_count: u32,
) -> Result<Option<PropRenderer>> {
    let Some(prop) = &character.prop else {
        return Ok(None);
    };
    let holders: Vec<usize> = (1..count).step_by(prop.every.max(1)).collect();
    PropRenderer::new_async(
        device,
        animator,
        &prop.mesh,
        prop.socket,
        &holders,
        prop.color,
        color_format,
        depth_format,
        sample_count,
    )
    .await
    .map(Some)
}
