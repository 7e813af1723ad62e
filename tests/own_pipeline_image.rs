//! The `own_pipeline` example's renderer draws the same picture as `SkinnedRenderer`.
//!
//! One frame of the example's crowd (25 mannequins, three clips, one page) is drawn twice from
//! the same palette: with the example's own pipeline and WGSL (skinning through the module) and
//! with the built-in renderer. Both use the same camera and light. Tolerance: a pixel differs
//! when a channel differs by more than 2 (of 255, sRGB); at most 0.1 % of the pixels may differ.
//! (The two shaders do the same arithmetic in the same order, but compile separately, so a vertex
//! may land an ulp apart and flip the odd edge pixel.) The comparison is shown to fail when the
//! example's pipeline reads the palette one joint off.

mod common;

// The example's own file (formatted with `examples/rustfmt.toml`, so left alone here).
#[rustfmt::skip]
#[path = "../examples/own_pipeline.rs"]
#[allow(dead_code)]
mod example;

use wgpu_anim::SkinnedRenderer;
use wgpu_anim::gpu::OffscreenTarget;

const W: u32 = 480;
/// The example's clear colour (the crowd scene's sky).
const SKY: wgpu::Color = wgpu::Color {
    r: 0.55,
    g: 0.62,
    b: 0.7,
    a: 1.0,
};
const H: u32 = 270;

/// Pixels whose largest channel difference exceeds 2, and the largest difference.
fn differing_pixels(a: &[u8], b: &[u8]) -> (usize, u8) {
    assert_eq!(a.len(), b.len());
    let mut count = 0;
    let mut largest = 0;
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = p.iter().zip(q).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
        count += usize::from(d > 2);
        largest = largest.max(d);
    }
    (count, largest)
}

/// Whether two pictures are the same within the stated tolerance.
fn same_picture(a: &[u8], b: &[u8]) -> bool {
    differing_pixels(a, b).0 * 1000 <= (W * H) as usize
}

/// Draws with `draw` into a fresh target cleared to the sky colour and reads the picture back.
fn picture(device: &wgpu::Device, queue: &wgpu::Queue, draw: impl FnOnce(&mut wgpu::RenderPass<'_>)) -> Vec<u8> {
    let target = OffscreenTarget::new(device, W, H).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, SKY);
        draw(&mut pass);
    }
    queue.submit([encoder.finish()]);
    target.read_rgba(device, queue).unwrap()
}

#[test]
fn the_example_pipeline_draws_what_the_built_in_renderer_draws() {
    let (device, queue) = common::device();
    let aspect = W as f32 / H as f32;
    let mut scene = example::Scene::new(&device, OffscreenTarget::COLOR_FORMAT, aspect).unwrap();
    assert_eq!(
        scene.animator.controller().page_count(),
        1,
        "the example's crowd fits one page"
    );

    // The example's own frame: animate to 1.5 s and draw with its pipeline.
    let target = OffscreenTarget::new(&device, W, H).unwrap();
    let views = [&target.color, &target.depth].map(|t| t.create_view(&Default::default()));
    scene.frame(&device, &queue, [&views[0], &views[1]], 1.5).unwrap();
    let own = target.read_rgba(&device, &queue).unwrap();

    // The same palette drawn by the built-in renderer.
    let library = scene.animator.controller().library();
    let skeleton = library.skeleton_at(0).unwrap();
    let mesh = wgpu_anim::mannequin::mesh(&library.skeletons()[0]);
    let renderer = SkinnedRenderer::new(
        &device,
        &scene.animator,
        skeleton,
        &mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .unwrap();
    renderer.set_camera(&queue, &example::camera(aspect));
    let n = scene.animator.controller().instance_count() as u32;
    let built_in = picture(&device, &queue, |pass| {
        renderer.draw(pass, &scene.animator, 0..n).unwrap()
    });

    let characters = built_in
        .chunks_exact(4)
        .zip(picture(&device, &queue, |_| {}).chunks_exact(4))
        .filter(|(p, sky)| p != sky)
        .count();
    assert!(
        characters * 20 > (W * H) as usize,
        "the characters cover {characters} of {} pixels",
        W * H
    );
    let (differ, largest) = differing_pixels(&own, &built_in);
    assert!(
        same_picture(&own, &built_in),
        "{differ} of {} pixels differ (largest channel difference {largest})",
        W * H
    );

    // The palette one joint off: entry j holds joint j - 1's matrix (and dual quaternion: the
    // example skins some characters with them). The comparison fails.
    let shift = |from: wgpu::BufferBinding<'_>, joint: u64| {
        let size = from.size.map_or(from.buffer.size() - from.offset, |s| s.get());
        let shifted = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("one joint off"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(from.buffer, from.offset, &shifted, joint, size - joint);
        queue.submit([encoder.finish()]);
        shifted
    };
    let shifted = shift(
        scene
            .animator
            .page_palette_buffer(0)
            .unwrap()
            .as_entire_buffer_binding(),
        size_of::<wgpu_anim::Affine>() as u64,
    );
    let shifted_dual = shift(
        scene.animator.page_dual_palette_buffer(0).unwrap(),
        size_of::<wgpu_anim::math::DualQuat>() as u64,
    );
    let layout = scene.pipeline.get_bind_group_layout(0);
    fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        }
    }
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            entry(0, &scene.camera),
            entry(1, &shifted),
            entry(2, scene.animator.page_instance_buffer(0).unwrap()),
            entry(example::SKIN.dual_palette(), &shifted_dual),
        ],
    });
    let off_by_one = picture(&device, &queue, |pass| {
        pass.set_pipeline(&scene.pipeline);
        example::SKIN
            .draw(pass, &[group], &scene.animator, &scene.mesh, 0..n)
            .unwrap();
    });
    let (shifted_differ, _) = differing_pixels(&off_by_one, &built_in);
    println!(
        "{} pixels, {characters} covered; own pipeline vs built-in: {differ} differ (largest {largest}); \
         palette one joint off: {shifted_differ} differ",
        W * H
    );
    assert!(
        !same_picture(&off_by_one, &built_in),
        "only {shifted_differ} pixels differ with the palette one joint off"
    );
    // And the example's pipeline with its own bind group still matches (the check above is not
    // a difference of render passes).
    let again = picture(&device, &queue, |pass| {
        pass.set_pipeline(&scene.pipeline);
        example::SKIN
            .draw(pass, &scene.groups, &scene.animator, &scene.mesh, 0..n)
            .unwrap();
    });
    assert!(same_picture(&again, &built_in));
}

#[test]
fn the_example_stays_within_150_lines() {
    let lines = include_str!("../examples/own_pipeline.rs").lines().count();
    assert!(
        lines <= 150,
        "examples/own_pipeline.rs has {lines} lines of Rust and WGSL"
    );
}

#[test]
fn the_example_pipeline_draws_every_page() {
    use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc};
    let (device, queue) = common::device();
    let aspect = W as f32 / H as f32;
    let scene = example::Scene::new(&device, OffscreenTarget::COLOR_FORMAT, aspect).unwrap();
    // The same 25 characters in pages of 7: four pages, the last one partly used.
    let (library, skeleton, _) = wgpu_anim::mannequin::library();
    let desc = AnimatorDesc::default()
        .with_page_instances(Some(7))
        .with_dual_quaternion(true);
    let mut animator = Animator::new(&device, &library, &desc).unwrap();
    for inst in scene.animator.controller().instances() {
        // The scene's library is another build of the same assets: its clip by index here.
        let mut d = InstanceDesc::new(library.clip_at(inst.clip).unwrap());
        d.world = inst.world.to_mat4();
        d.tint = inst.tint.to_le_bytes();
        d.time = inst.start_time;
        d.skinning = wgpu_anim::gpu::Skinning::Blend(inst.dual_quaternion);
        animator.controller_mut().add_instance(&d).unwrap();
    }
    assert!(
        animator.controller().pages_in_use() >= 4,
        "{} pages",
        animator.controller().pages_in_use()
    );
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);

    let mesh = wgpu_anim::mannequin::mesh(&library.skeletons()[skeleton.index() as usize]);
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        skeleton,
        &mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .unwrap();
    renderer.set_camera(&queue, &example::camera(aspect));
    let n = animator.controller().instance_count() as u32;
    let built_in = picture(&device, &queue, |pass| renderer.draw(pass, &animator, 0..n).unwrap());
    let camera = wgpu::BindGroupEntry {
        binding: 0,
        resource: scene.camera.as_entire_binding(),
    };
    let layout = scene.pipeline.get_bind_group_layout(0);
    let groups = example::SKIN
        .bind_groups(&device, &layout, &animator, &[camera])
        .unwrap();
    let own = picture(&device, &queue, |pass| {
        pass.set_pipeline(&scene.pipeline);
        example::SKIN.draw(pass, &groups, &animator, &scene.mesh, 0..n).unwrap();
    });
    let (differ, largest) = differing_pixels(&own, &built_in);
    assert!(
        same_picture(&own, &built_in),
        "{differ} pixels differ (largest {largest})"
    );
    // Every page drawn: without the last page's bind group, its characters are missing.
    let fewer = picture(&device, &queue, |pass| {
        pass.set_pipeline(&scene.pipeline);
        example::SKIN
            .draw(
                pass,
                &groups[..animator.controller().pages_in_use() - 1],
                &animator,
                &scene.mesh,
                0..n,
            )
            .unwrap();
    });
    assert!(!same_picture(&fewer, &built_in), "the last page draws nothing");
}
