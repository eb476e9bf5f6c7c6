import { mount } from 'svelte';
import App from './App.svelte';
import ConsoleApp from './ConsoleApp.svelte';
import { isConsole } from './transport/platform';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('missing #app element');
// One UI: the desktop window's shell, or the relay console's (sign-in, its own screens); the
// screens and the bindings are the same code over either transport.
export default mount(isConsole ? ConsoleApp : App, { target });
