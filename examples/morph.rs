//! The mannequin's morph targets, each character at its own weights: as bound, breathing in
//! (the chest swells), cheeks puffed, and both. The same mesh and pose for all four, drawn by the
//! built-in renderer; only each instance's morph weights differ. Uses `Animator` and
//! `SkinnedRenderer` directly.
//!
//! ```text
//! cargo run --release --example morph -- [--weight W] [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec3};
use std::path::PathBuf;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, headless_device};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, SkinnedRenderer, mannequin};

/// Renders the mannequin's morph targets side by side.
#[derive(Parser)]
#[command(name = "morph")]
struct Args {
    /// The weight of each target shown, from 0 to 2.
    #[arg(long, value_name = "W", default_value_t = 1.0)]
    weight: f32,
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "morph.png")]
    out: PathBuf,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if !(0.0..=2.0).contains(&args.weight) {
        return Err(format!("--weight {} is outside 0..2", args.weight).into());
    }
    let (device, queue) = headless_device()?;
    let (library, skeleton, clips) = mannequin::library();
    let mesh = mannequin::mesh(&library.skeletons()[skeleton.index() as usize]);
    let targets = mesh.morph_targets.targets.len();
    // Room for the mesh's weights; four characters idling at the same phase.
    let desc = AnimatorDesc::default().with_max_instances(4).with_morph_weights(targets as u32);
    let mut animator = Animator::new(&device, &library, &desc)?;
    let w = args.weight;
    let weights = [[0.0, 0.0], [w, 0.0], [0.0, w], [w, w]];
    let controller = animator.controller_mut();
    for (k, own) in weights.iter().enumerate() {
        let world = Mat4::from_rotation_translation(Quat::from_rotation_y(0.45), Vec3::new(k as f32 * 0.7, 0.0, 0.0));
        controller.add_instance(
            &InstanceDesc::new(clips[0]).with_rate(0.0).with_world(world).with_tint([200, 190, 176, 255]),
        )?;
        controller.set_morph_weights(k, own)?;
    }

    let (width, height) = (1200, 520);
    let target = OffscreenTarget::new(&device, width, height)?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        skeleton,
        &mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )?;
    // Orthographic, the upper bodies from the front.
    let (vw, vh) = (3.0, 3.0 * height as f32 / width as f32);
    let centre = Vec3::new(1.05, 1.42, 0.0);
    let eye = centre + Vec3::new(0.0, 0.3, 6.0);
    let camera = Camera::orthographic_look_at(eye, centre, vw, vh, 0.1, 30.0).with_light(Vec3::new(-0.5, -0.5, -1.0));
    renderer.set_camera(&queue, &camera);
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder)?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        renderer.draw(&mut pass, &animator, 0..4)?;
    }
    queue.submit([encoder.finish()]);
    wgpu_anim::image::save_png(&args.out, width, height, &target.read_rgba(&device, &queue)?)?;
    println!(
        "left to right: as bound; {} at {w}; {} at {w}; both; saved {}",
        mannequin::BREATHE,
        mannequin::PUFF,
        args.out.display()
    );
    Ok(())
}
