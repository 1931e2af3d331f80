using System.Runtime.InteropServices;
using jemalloc.Interop;

namespace jemalloc;

public static unsafe partial class Jem
{
    private static readonly Lock MessageGate = new();
    private static readonly Lock MessageWriterGate = new();
    private static EventHandler<JemMessageEventArgs>? s_messageReceived;
    private static TextWriter? s_messageWriter;
    private static nint s_defaultMessageFunction;
    private static bool s_defaultMessageFunctionSaved;

    /// <summary>
    /// Raised for every message jemalloc prints (warnings, errors, and <see cref="PrintStats(string?)"/>).
    /// While at least one handler or a <see cref="MessageWriter"/> is set, jemalloc's messages come
    /// here instead of standard error; with none, jemalloc's own behaviour (standard error) is restored.
    /// </summary>
    /// <remarks>
    /// <para>Subscribing does not load the library; the hook is installed when it loads. Messages
    /// printed while the library loads (such as <c>Invalid conf pair</c> for a bad <see cref="Init(string)"/>
    /// option) come before any hook can exist and always go to standard error: use
    /// <see cref="GetConfigurationReport()"/> to find rejected options.</para>
    /// <para>Handlers run on the thread jemalloc prints from, possibly while jemalloc holds an internal
    /// lock: they must be quick and must not call jemalloc (<see cref="Jem"/>) themselves. An exception a
    /// handler throws is caught and dropped, since it cannot cross into native code.</para>
    /// </remarks>
    public static event EventHandler<JemMessageEventArgs>? MessageReceived
    {
        add
        {
            lock (MessageGate)
            {
                s_messageReceived += value;
                UpdateMessageHook();
            }
        }

        remove
        {
            lock (MessageGate)
            {
                s_messageReceived -= value;
                UpdateMessageHook();
            }
        }
    }

    /// <summary>
    /// A writer that receives every message jemalloc prints, or <see langword="null"/> (the default)
    /// for none. Writes are serialized. The same rules as for <see cref="MessageReceived"/> apply;
    /// exceptions the writer throws are caught and dropped.
    /// </summary>
    public static TextWriter? MessageWriter
    {
        get => Volatile.Read(ref s_messageWriter);
        set
        {
            lock (MessageGate)
            {
                Volatile.Write(ref s_messageWriter, value);
                UpdateMessageHook();
            }
        }
    }

    // Run by the loader right after the library loaded, to install a hook asked for earlier.
    private static void OnNativeLibraryLoaded(nint handle)
    {
        lock (MessageGate)
        {
            InstallMessageHook(handle);
        }
    }

    private static void UpdateMessageHook()
    {
        nint handle = NativeLibraryLoader.WhenLoaded(OnNativeLibraryLoaded);
        if (handle != 0)
        {
            InstallMessageHook(handle);
        }
    }

    private static void InstallMessageHook(nint handle)
    {
        // je_malloc_message is a variable holding a function pointer; null means jemalloc's default (standard error).
        nint* slot = (nint*)NativeLibrary.GetExport(handle, JemNative.MallocMessageSymbol);
        if (!s_defaultMessageFunctionSaved)
        {
            s_defaultMessageFunction = Volatile.Read(ref *slot);
            s_defaultMessageFunctionSaved = true;
        }

        bool listening = s_messageReceived is not null || s_messageWriter is not null;
        nint function = listening ? (nint)(delegate* unmanaged<void*, byte*, void>)&OnMessage : s_defaultMessageFunction;
        Volatile.Write(ref *slot, function);
    }

    [UnmanagedCallersOnly]
    private static void OnMessage(void* state, byte* text)
    {
#pragma warning disable CA1031 // Nothing may propagate into jemalloc: a failing handler or writer is ignored.
        try
        {
            string message = Marshal.PtrToStringUTF8((nint)text) ?? string.Empty;
            EventHandler<JemMessageEventArgs>? handlers = Volatile.Read(ref s_messageReceived);
            if (handlers is not null)
            {
                try
                {
                    handlers(null, new JemMessageEventArgs(message));
                }
                catch (Exception)
                {
                    // Dropped: see MessageReceived. The writer below still gets the message.
                }
            }

            TextWriter? writer = Volatile.Read(ref s_messageWriter);
            if (writer is not null)
            {
                lock (MessageWriterGate)
                {
                    writer.Write(message);
                }
            }
        }
        catch (Exception)
        {
            // Dropped: see MessageWriter.
        }
#pragma warning restore CA1031
    }
}
