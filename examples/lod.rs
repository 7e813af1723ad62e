//! Culling and update-rate LOD, seen: a field of walking mannequins from a camera above its edge,
//! each character tinted by how often the GPU evaluates it — blue every frame, green every 2nd,
//! yellow every 4th, red every 8th (interpolating between; thresholds twice
//! `gpu::DEFAULT_UPDATE_RATES`, so that one picture holds every rate) — and those out of view
//! neither evaluated nor drawn. The tints are the renderer's LOD tint
//! (`SkinnedRenderer::set_lod_tint`): the rates the GPU decided this frame, read in the vertex
//! stage; the counts printed are read back from the same marks.
//!
//! ```text
//! cargo run --release --example lod -- [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec3};
use std::path::PathBuf;
use wgpu_anim::gpu::{Camera, DEFAULT_UPDATE_RATES, GroundRenderer, OffscreenTarget, headless_device};
use wgpu_anim::layout::{MARK_DRAWN, MARK_RATE_SHIFT};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, SkinnedRenderer, mannequin};

/// Renders a field of mannequins tinted by their update rate.
#[derive(Parser)]
#[command(name = "lod")]
struct Args {
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "lod.png")]
    out: PathBuf,
}

/// Characters across the field and rows of them, and metres between them.
const SIDE: usize = 40;
const ROWS: usize = 64;
const SPACING: f32 = 3.0;

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (device, queue) = headless_device()?;
    let (library, skeleton, clips) = mannequin::library();
    let mesh = mannequin::mesh(&library.skeletons()[skeleton.index() as usize]);
    let radius = library.mesh_radius(skeleton, &mesh)?;
    let (width, height) = (1200, 520);
    let eye = Vec3::new(-8.0, 16.0, 14.0);
    let camera = Camera::look_at(eye, Vec3::new(6.0, 0.0, -45.0), 0.8, width as f32 / height as f32, 0.1, 400.0);
    let view = camera.view_proj;
    let thresholds = DEFAULT_UPDATE_RATES.map(|t| 2.0 * t);
    let n = SIDE * ROWS;
    let desc = AnimatorDesc::default().with_max_instances(n as u32).with_culling(true).with_lod_interpolation(true);
    let mut animator = Animator::new(&device, &library, &desc)?;
    let controller = animator.controller_mut();
    for i in 0..n {
        let (x, z) = ((i % SIDE) as f32 * SPACING - 60.0, -((i / SIDE) as f32) * SPACING);
        let world = Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32 * 2.4), Vec3::new(x, 0.0, z));
        controller
            .add_instance(&InstanceDesc::new(clips[1]).with_time((i as f32 * 0.618).fract() * 2.0).with_world(world))?;
    }
    controller.set_bounds(skeleton, radius)?;
    controller.set_cull_view(Some(view))?;
    controller.set_update_rates(Some(thresholds))?;

    let target = OffscreenTarget::new(&device, width, height)?;
    let (color, depth) = (OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT));
    let renderer = SkinnedRenderer::new(&device, &animator, skeleton, &mesh, color, depth, 1)?;
    renderer.set_camera(&queue, &camera);
    renderer.set_lod_tint(&queue, true);
    let ground = GroundRenderer::new(&device, color, depth, 1, None);
    ground.set_camera(&queue, &camera);
    let mut evaluated = Vec::new();
    for f in 0..16 {
        animator.prepare(&queue, 1.0 / 30.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder)?;
        renderer.encode(&mut encoder, &animator);
        {
            let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
            ground.draw(&mut pass);
            renderer.draw_visible(&mut pass, &animator)?;
        }
        queue.submit([encoder.finish()]);
        if f > 0 {
            // The first frame evaluates everyone it draws: they all come into view.
            let head = animator.read_visible_head(&device, &queue, 0)?;
            evaluated.push(head.count);
        }
    }
    wgpu_anim::image::save_png(&args.out, width, height, &target.read_rgba(&device, &queue)?)?;
    let (head, lists) = animator.read_visible_page(&device, &queue, 0)?;
    let mut per_rate = [0usize; 4];
    for marks in lists.marks.iter().filter(|&&m| m & MARK_DRAWN != 0) {
        per_rate[(marks >> MARK_RATE_SHIFT & 3) as usize] += 1;
    }
    println!(
        "{n} characters, {} drawn: {} every frame, {} every 2nd, {} every 4th, {} every 8th; evaluated per frame {}..{}; saved {}",
        head.drawn_count,
        per_rate[0],
        per_rate[1],
        per_rate[2],
        per_rate[3],
        evaluated.iter().min().unwrap_or(&0),
        evaluated.iter().max().unwrap_or(&0),
        args.out.display()
    );
    Ok(())
}
