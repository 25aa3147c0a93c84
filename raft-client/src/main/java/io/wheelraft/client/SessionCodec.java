package io.wheelraft.client;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.wheelraft.client.proto.SessionCommand;

import java.nio.ByteBuffer;

/**
 * The log format of a client command: a 4-byte marker, then a {@link SessionCommand}. The marker
 * tells the library's entries from those a service appends itself with {@code Node.apply}, which
 * pass to its state machine untouched. Stateless.
 */
final class SessionCodec {

    /** 0xF5 'W' 'C' 0x01: not valid UTF-8 text and not a protobuf tag a message would start with. */
    static final int MARKER = 0xF5574301;

    private SessionCodec() {
    }

    static ByteBuffer encode(SessionCommand command) {
        // Serialised straight after the marker: one buffer, no intermediate copy of the body.
        byte[] out = new byte[4 + command.getSerializedSize()];
        ByteBuffer.wrap(out).putInt(MARKER);
        CodedOutputStream coded = CodedOutputStream.newInstance(out, 4, out.length - 4);
        try {
            command.writeTo(coded);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("serialising into an array of its exact size cannot fail", e);
        }
        coded.checkNoSpaceLeft();
        return ByteBuffer.wrap(out);
    }

    static boolean isSessionCommand(ByteBuffer data) {
        return data.remaining() >= 4 && data.getInt(data.position()) == MARKER;
    }

    /** @throws IllegalArgumentException if the entry is not a readable command of this format */
    static SessionCommand decode(ByteBuffer data) {
        ByteBuffer body = data.duplicate();
        body.position(body.position() + 4);
        SessionCommand c;
        try {
            c = SessionCommand.parseFrom(body);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a readable client command: " + e.getMessage(), e);
        }
        if (c.getFormatVersion() != RetryTable.FORMAT_VERSION) {
            throw new IllegalArgumentException("client command format " + c.getFormatVersion() + "; this build reads only "
                    + RetryTable.FORMAT_VERSION);
        }
        return c;
    }
}
