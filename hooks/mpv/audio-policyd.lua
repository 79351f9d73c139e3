-- audio-policyd hook for mpv: tells the audio policy daemon what kind of audio mpv plays.
--
-- Install: copy or link this file to ~/.config/mpv/scripts/audio-policyd.lua (or pass
-- --script=/path/to/audio-policyd.lua). Pausing, resuming and Now Playing need no hook: they work
-- through MPRIS, with the mpv-mpris plugin (Debian: mpv-mpris).
--
-- What it does:
--   * Spoken audio (podcasts, audiobooks) must be paused, never ducked: ducked speech is
--     unintelligible. When the file is spoken audio, the hook renames mpv's audio client to
--     "mpv podcast" before its sound starts (re-opening the audio output if it is already open), and
--     the default policy's rule `app = "*podcast*"` marks the stream spoken.
--   * With `class=...`, mpv holds an interruption of that class while it plays (for mpv used as an
--     alert or announcement player): `audio-policyd interrupt --class CLASS`, ended when mpv pauses,
--     stops or quits.
--
-- A script cannot set media.role itself: mpv's PulseAudio output takes extra stream properties from
-- the environment, e.g.  PULSE_PROP='media.role=music' mpv ...
--
-- Options: ~/.config/mpv/script-opts/audio-policyd.conf (KEY=VALUE lines), or
-- --script-opts=audio-policyd-KEY=VALUE,...
local mp = require "mp"
local msg = require "mp.msg"
local options = require "mp.options"
local utils = require "mp.utils"

local o = {
    -- auto: recognise spoken audio by genre, file extension or path; yes / no: always / never.
    spoken = "auto",
    spoken_genres = "podcast,audiobook,audio book,hörbuch,speech,spoken word,spoken",
    spoken_extensions = "m4b,aa,aax",
    spoken_paths = "podcast,audiobook,audio book,hörbuch",
    -- The word added to the client name for spoken audio; the policy must match it (default policy:
    -- "*podcast*" and "*audiobook*").
    spoken_name = "podcast",
    -- An interruption class to hold while playing (empty: none), e.g. "short" or "notification".
    class = "",
    -- The audio-policyd executable.
    command = "audio-policyd",
}
options.read_options(o, "audio-policyd")

local base_name = mp.get_property("audio-client-name", "mpv")

local function words(text)
    local list = {}
    for word in string.gmatch(text, "[^,]+") do
        word = word:match("^%s*(.-)%s*$"):lower()
        if word ~= "" then table.insert(list, word) end
    end
    return list
end

local function mentions(text, list)
    text = (text or ""):lower()
    for _, word in ipairs(list) do
        if text:find(word, 1, true) then return true end
    end
    return false
end

local function is_spoken()
    if o.spoken == "yes" then return true end
    if o.spoken == "no" then return false end
    if mentions(mp.get_property("metadata/by-key/genre", ""), words(o.spoken_genres)) then return true end
    local path = mp.get_property("path", "")
    local extension = (path:match("%.(%w+)$") or ""):lower()
    for _, known in ipairs(words(o.spoken_extensions)) do
        if extension == known then return true end
    end
    return mentions(path, words(o.spoken_paths))
end

-- Before the file's audio starts: the client name carries the spoken hint.
local function declare()
    local wanted = base_name
    if is_spoken() then wanted = base_name .. " " .. o.spoken_name end
    if mp.get_property("audio-client-name") == wanted then return end
    msg.info("audio client name: " .. wanted)
    mp.set_property("audio-client-name", wanted)
    -- The name is read when the audio output opens: re-open one that is open already.
    if mp.get_property("current-ao") then mp.command("ao-reload") end
end
mp.add_hook("on_preloaded", 50, declare)

-- An interruption held while mpv plays (only with `class`).
local hold = nil

local function release()
    if hold then
        mp.abort_async_command(hold)
        hold = nil
    end
end

local function take()
    if o.class == "" or hold then return end
    hold = mp.command_native_async({
        name = "subprocess",
        playback_only = true,
        -- Its standard output is then a pipe to mpv: when mpv quits without stopping it, the pipe's
        -- end tells `interrupt` to end the interruption.
        capture_stdout = true,
        args = { o.command, "interrupt", "--class", o.class, "--app", base_name,
                 "--property", "application.process.id=" .. tostring(utils.getpid()) },
    }, function(success, result, err)
        hold = nil
        if not success then msg.warn("audio-policyd interrupt: " .. tostring(err)) end
    end)
end

if o.class ~= "" then
    mp.observe_property("core-idle", "bool", function(_, idle)
        if idle then release() else take() end
    end)
    mp.register_event("shutdown", release)
end
