// Which front end this build is: the desktop window (Tauri IPC) or the team relay's web console
// (HTTP to /console/api, `vite build --mode console`). Screens ask only `desktopOnly` to leave out
// what only the desktop can do (the relay's own token and port, this machine's client set-up,
// autostart, files, a login's sign-in on this machine) — never which transport carries a call.
export const isConsole: boolean = import.meta.env.MODE === 'console';

/** Whether a desktop-only control is shown. */
export const desktopOnly: boolean = !isConsole;
