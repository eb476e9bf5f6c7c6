//! Entry point of the desktop app.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    switchyard_desktop::run();
}
