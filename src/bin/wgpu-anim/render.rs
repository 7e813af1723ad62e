//! `wgpu-anim render`: a clip at a time drawn to a PNG, without a window.

use crate::{RenderArgs, Size, clip_source, find_animation, load};
use glam::{Mat4, Vec2, Vec3};
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget};
use wgpu_anim::scene::Character;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LoopMode, SkinnedRenderer};

/// A perspective camera slightly above and in front (+Z) of the box `lo..hi`, turned a little to
/// the side, at the distance where every corner of the box is inside the picture with a margin.
fn frame_box(lo: Vec3, hi: Vec3, aspect: f32) -> Camera {
    let fov_y = 35f32.to_radians();
    let margin = 1.12;
    let centre = (lo + hi) * 0.5;
    let to_eye = Vec3::new(0.45, 0.38, 1.0).normalize();
    let right = Vec3::Y.cross(to_eye).normalize();
    let up = to_eye.cross(right);
    let (ty, tx) = ((fov_y * 0.5).tan() / margin, (fov_y * 0.5).tan() * aspect / margin);
    let radius = ((hi - lo) * 0.5).length();
    let mut distance: f32 = 0.0;
    for k in 0..8 {
        let corner = Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        ) - centre;
        let (x, y, z) = (corner.dot(right), corner.dot(up), corner.dot(to_eye));
        distance = distance.max(z + x.abs() / tx).max(z + y.abs() / ty);
    }
    let distance = if distance.is_finite() && distance > 0.0 {
        distance.max(radius * 1.01)
    } else {
        1.0
    };
    let near = (distance - radius).max(distance * 0.01) * 0.5;
    let far = (distance + radius) * 4.0 + 100.0;
    Camera::look_at(centre + to_eye * distance, centre, fov_y, aspect, near, far)
}

pub(crate) fn render(a: &RenderArgs) -> Result<(), String> {
    let Size { width, height } = a.size;
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let animation = find_animation(&imp, &file, &a.clip)?;
    let s = Character::skeleton_of(&imp).map_err(|e| e.to_string())?;
    let c = imp.skeletons[s]
        .clip_of_animation(animation)
        .ok_or_else(|| format!("{file}: animation {animation} does not animate the skeleton that has the mesh"))?;
    let source = clip_source(a.compressed.as_deref())?;
    let character = Character::from_imported_with(&imp, s, &source).map_err(|e| e.to_string())?;
    let clip = character.clips[c];
    let duration = character.library.clip_duration(clip).unwrap_or(0.0);

    // Instances on a grid facing +Z, times spread over the clip; the posed box of each from the
    // CPU mirror, in the world.
    let (lo, hi) = character.posed_bounds(clip, a.time).map_err(|e| e.to_string())?;
    let size = (hi - lo) * character.scale;
    let gap = size.max_element() * 0.15;
    let (sx, sz) = (size.x + gap, size.z + gap);
    let side = (a.count as f32).sqrt().ceil() as u32;
    let rows = a.count.div_ceil(side);
    let mut instances = Vec::with_capacity(a.count as usize);
    let (mut wlo, mut whi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for i in 0..a.count {
        let (col, row) = (i % side, i / side);
        let position = Vec2::new(
            (col as f32 - (side - 1) as f32 * 0.5) * sx,
            (row as f32 - (rows - 1) as f32 * 0.5) * sz,
        );
        let time = if i == 0 || duration <= 0.0 {
            a.time
        } else {
            (a.time + duration * i as f32 / a.count as f32).rem_euclid(duration)
        };
        let world = character.world(position, 0.0);
        let (plo, phi) = character.posed_bounds(clip, time).map_err(|e| e.to_string())?;
        for k in 0..8 {
            let p = world.transform_point3(Vec3::new(
                if k & 1 == 0 { plo.x } else { phi.x },
                if k & 2 == 0 { plo.y } else { phi.y },
                if k & 4 == 0 { plo.z } else { phi.z },
            ));
            (wlo, whi) = (wlo.min(p), whi.max(p));
        }
        instances.push((world, time));
    }
    if !(wlo.is_finite() && whi.is_finite()) {
        return Err(format!("{file}: the posed model has no finite bounds"));
    }
    // Stand the lowest point on the ground (y = 0).
    let lift = Mat4::from_translation(Vec3::new(0.0, -wlo.y, 0.0));
    (whi.y, wlo.y) = (whi.y - wlo.y, 0.0);

    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &character.library,
        &AnimatorDesc::default()
            .with_max_instances(a.count)
            // Room for the mesh's morph weights: its default weights, and the clip's tracks.
            .with_morph_weights(character.mesh.morph_targets.targets.len() as u32)
            // One clip each, no layers.
            .with_layers(false),
    )
    .map_err(|e| e.to_string())?;
    let defaults = character.mesh.morph_targets.default_weights.clone();
    for (world, time) in &instances {
        let i = animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(clip)
                    .with_time(*time)
                    .with_rate(0.0)
                    .with_loop_mode(LoopMode::Once)
                    .with_world(lift * *world)
                    .with_tint([225, 170, 120, 255]),
            )
            .map_err(|e| e.to_string())?;
        if animator.controller().morph_room() > 0 {
            animator
                .controller_mut()
                .set_morph_weights(i, &defaults)
                .map_err(|e| e.to_string())?;
        }
    }
    let target = OffscreenTarget::new(&device, width, height).map_err(|e| e.to_string())?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        character.skeleton,
        &character.mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .map_err(|e| e.to_string())?;
    let ground = (!a.no_ground).then(|| {
        GroundRenderer::new(
            &device,
            OffscreenTarget::COLOR_FORMAT,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
            None,
        )
    });
    let camera = frame_box(wlo, whi, width as f32 / height as f32);
    renderer.set_camera(&queue, &camera);
    if let Some(g) = &ground {
        g.set_camera(&queue, &camera);
    }
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).map_err(|e| e.to_string())?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        if let Some(g) = &ground {
            g.draw(&mut pass);
        }
        renderer
            .draw(&mut pass, &animator, 0..a.count)
            .map_err(|e| e.to_string())?;
    }
    queue.submit([encoder.finish()]);
    let rgba = target.read_rgba(&device, &queue).map_err(|e| e.to_string())?;
    wgpu_anim::image::save_png(&a.out, width, height, &rgba).map_err(|e| e.to_string())?;
    outln!(
        "wrote {} ({}x{}): {file}, clip {animation} '{}' at {} s, {} instance{}",
        a.out.display(),
        width,
        height,
        imp.animations[animation].name,
        a.time,
        a.count,
        if a.count == 1 { "" } else { "s" }
    );
    Ok(())
}
